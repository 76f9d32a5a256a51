"""Conversions that feed the tensor cores: f32 pairs to packed bf16x2/f16x2, f32 to tf32.

Packed registers hold ``lo`` in bits 0-15 and ``hi`` in bits 16-31, the order the
mma fragments use (element 2i low, 2i+1 high). Note that PTX's ``cvt.rn.bf16x2.f32
d, a, b`` puts ``a`` in the *upper* half; the templates below pass ``hi`` first.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from . import bits
from .factory import build
from .spec import InstructionSpec, Operand


def _pack_sim(kind):
    def simulate(lo, hi):
        return np.uint32(bits.join16(bits.f32_to_half_bits(lo, kind),
                                     bits.f32_to_half_bits(hi, kind)))
    return simulate


pack_bf16x2 = build(InstructionSpec(
    name="pack_bf16x2",
    family="convert",
    ptx="cvt.rn.bf16x2.f32 $d, $hi, $lo;",
    outputs=(Operand("d", types.uint32),),
    inputs=(Operand("lo", types.float32), Operand("hi", types.float32)),
    min_arch=Arch(8, 0),
    min_ptx=(7, 0),
    sass=("F2FP",),
    simulate=_pack_sim("bf16"),
    doc="Round two float32 to bfloat16 (nearest even) and pack them: lo in bits 0-15.",
))

# cvt.rn.f16x2.f32 needs sm_80; two scalar conversions and a mov work from sm_75 and
# assemble to the same F2FP.PACK_AB on sm_80+.
pack_f16x2 = build(InstructionSpec(
    name="pack_f16x2",
    family="convert",
    ptx=("{ .reg .b16 %nbk_l, %nbk_h; cvt.rn.f16.f32 %nbk_l, $lo; "
         "cvt.rn.f16.f32 %nbk_h, $hi; mov.b32 $d, {%nbk_l, %nbk_h}; }"),
    outputs=(Operand("d", types.uint32),),
    inputs=(Operand("lo", types.float32), Operand("hi", types.float32)),
    min_arch=Arch(7, 5),
    sass=("F2F",),
    simulate=_pack_sim("f16"),
    doc="Round two float32 to float16 (nearest even) and pack them: lo in bits 0-15.",
))

f32_to_tf32 = build(InstructionSpec(
    name="f32_to_tf32",
    family="convert",
    ptx="cvt.rna.tf32.f32 $d, $x;",
    outputs=(Operand("d", types.uint32),),
    inputs=(Operand("x", types.float32),),
    min_arch=Arch(8, 0),
    min_ptx=(7, 0),
    simulate=lambda x: np.uint32(bits.f32_to_tf32_bits(x)),
    doc="Round a float32 to tf32 (nearest, ties away from zero); the low 13 bits are zero.",
))

__all__ = ["pack_bf16x2", "pack_f16x2", "f32_to_tf32"]


def _round_sim(kind):
    return lambda x: np.uint16(bits.f32_to_half_bits(x, kind))


cvt_f32_to_bf16 = build(InstructionSpec(
    name="cvt_f32_to_bf16", family="convert", ptx="cvt.rn.bf16.f32 $d, $x;",
    outputs=(Operand("d", types.uint16),), inputs=(Operand("x", types.float32),),
    min_arch=Arch(8, 0), min_ptx=(7, 0), sass=("F2FP",), simulate=_round_sim("bf16"),
    doc="Round a float32 to bfloat16 (nearest even); returns its 16 bits."))

cvt_f32_to_f16 = build(InstructionSpec(
    name="cvt_f32_to_f16", family="convert", ptx="cvt.rn.f16.f32 $d, $x;",
    outputs=(Operand("d", types.uint16),), inputs=(Operand("x", types.float32),),
    min_arch=Arch(7, 5), sass=("F2F",), simulate=_round_sim("f16"),
    doc="Round a float32 to float16 (nearest even); returns its 16 bits."))

f16_bits_to_f32 = build(InstructionSpec(
    name="f16_bits_to_f32", family="convert", ptx="cvt.f32.f16 $d, $h;",
    outputs=(Operand("d", types.float32),), inputs=(Operand("h", types.uint16),),
    min_arch=Arch(7, 5), simulate=lambda h: np.float32(np.uint16(h).view(np.float16)),
    doc="The float32 value of float16 bits (exact)."))

bits_to_f32 = build(InstructionSpec(
    name="bits_to_f32", family="convert", ptx="mov.b32 $d, $b;",
    outputs=(Operand("d", types.float32),), inputs=(Operand("b", types.uint32),),
    min_arch=Arch(7, 5), simulate=lambda b: bits.bits_f32(b),
    doc="Reinterpret 32 bits as a float32 (bf16 bits << 16 gives the bf16 value)."))

f32_to_bits = build(InstructionSpec(
    name="f32_to_bits", family="convert", ptx="mov.b32 $d, $x;",
    outputs=(Operand("d", types.uint32),), inputs=(Operand("x", types.float32),),
    min_arch=Arch(7, 5), simulate=lambda x: np.uint32(bits.f32_bits(x)),
    doc="Reinterpret a float32 as its 32 bits."))

__all__ += ["cvt_f32_to_bf16", "cvt_f32_to_f16", "f16_bits_to_f32", "bits_to_f32", "f32_to_bits"]
