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
