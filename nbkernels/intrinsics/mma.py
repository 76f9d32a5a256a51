"""``mma.sync.aligned``: warp-wide matrix multiply-accumulate on the tensor cores (sm_75+/sm_80+).

Each shape's fragment layout is written once, as the coordinates each lane holds
(PTX ISA, "Matrix Fragments for mma.m16n8k*"), and used by the simulator and the
tests alike. ``groupID = lane >> 2`` and ``threadID_in_group = lane % 4`` below.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from . import bits
from .factory import build
from .spec import InstructionSpec, Operand


# --- fragment layouts: element i of lane -> (row, col) ----------------------------------
# Plain arithmetic only: the probes and the GEMM compile these as numba device functions.
def acc_m16n8(lane, i):  # C/D of every m16n8kX shape; also A of f16 m16n8k8
    g, t = lane >> 2, lane & 3
    return g + 8 * (i // 2), 2 * t + (i % 2)


def a_m16n8k16_16bit(lane, i):
    g, t = lane >> 2, lane & 3
    return g + 8 * ((i // 2) % 2), 2 * t + (i % 2) + 8 * (i // 4)


def b_m16n8k16_16bit(lane, i):
    g, t = lane >> 2, lane & 3
    return 2 * t + (i % 2) + 8 * (i // 2), g


def b_m16n8k8_f16(lane, i):
    g, t = lane >> 2, lane & 3
    return 2 * t + i, g


def a_m16n8k8_tf32(lane, i):
    g, t = lane >> 2, lane & 3
    return g + 8 * (i % 2), t + 4 * (i // 2)


def b_m16n8k8_tf32(lane, i):
    g, t = lane >> 2, lane & 3
    return t + 4 * i, g


def a_m16n8k32_8bit(lane, i):
    g, t = lane >> 2, lane & 3
    return g + 8 * ((i // 4) % 2), 4 * t + (i % 4) + 16 * (i // 8)


def b_m16n8k32_8bit(lane, i):
    g, t = lane >> 2, lane & 3
    return 4 * t + (i % 4) + 16 * (i // 4), g


def a_m8n8k4_f64(lane, i):
    g, t = lane >> 2, lane & 3
    return g, t


def b_m8n8k4_f64(lane, i):
    g, t = lane >> 2, lane & 3
    return t, g


def acc_m8n8_f64(lane, i):
    g, t = lane >> 2, lane & 3
    return g, 2 * t + i


# sm_90 f64 shapes: A of m16n8k4 is two m8n8k4 A fragments (rows g, g + 8); A of m16n8k8 holds
# them for k-quarters 0 and 1 (the tf32 m16n8k8 positions), B of m16n8k8 two m8n8k4 B fragments;
# C/D is acc_m16n8.
def a_m16n8k4_f64(lane, i):
    g, t = lane >> 2, lane & 3
    return g + 8 * i, t


# --- element codecs: register values <-> matrix elements ---------------------------------
def _unpack(regs, kind):
    """Registers of one lane -> its elements (as float64 or int), in element order."""
    regs = regs if isinstance(regs, tuple) else (regs,)
    out = []
    for r in regs:
        if kind in ("f16", "bf16"):
            out += [bits.half_bits_to_f64(h, kind) for h in bits.split16(r)]
        elif kind == "tf32":
            out.append(bits.tf32_bits_to_f64(r))
        elif kind in ("s8", "u8"):
            out += bits.bytes_of(r, signed=kind == "s8")
        elif kind in ("f32", "f64"):
            out.append(float(r))
        elif kind == "s32":
            out.append(int(r))
        else:  # pragma: no cover - specs below use only the kinds above
            raise ValueError(kind)
    return out


def _pack(vals, kind):
    """Elements of one lane -> its output registers (simulator return values)."""
    if kind == "f32":
        return tuple(np.float32(v) for v in vals)
    if kind == "f64":
        return tuple(np.float64(v) for v in vals)
    if kind == "s32":
        return tuple(np.int32(bits.wrap_s32(v)) for v in vals)
    if kind == "f16":
        hs = [bits.f32_to_half_bits(np.float16(v), "f16") for v in vals]
        return tuple(np.uint32(bits.join16(hs[k], hs[k + 1])) for k in range(0, len(hs), 2))
    raise ValueError(kind)  # pragma: no cover


def make_simulator(shape, a_kind, b_kind, acc_kind, a_layout, b_layout, acc_layout, n_acc):
    m, n, k = shape
    integer = acc_kind == "s32"

    def simulate(lanes):
        dt = object if integer else np.float64
        A = np.zeros((m, k), dt)
        B = np.zeros((k, n), dt)
        C = np.zeros((m, n), dt)
        for lane, (a, b, c) in enumerate(lanes):
            for i, v in enumerate(_unpack(a, a_kind)):
                A[a_layout(lane, i)] = v
            for i, v in enumerate(_unpack(b, b_kind)):
                B[b_layout(lane, i)] = v
            for i, v in enumerate(_unpack(c, acc_kind)):
                C[acc_layout(lane, i)] = v
        D = A.dot(B) + C
        if not integer and acc_kind == "f32":
            D = D.astype(np.float32)
        out = []
        for lane in range(32):
            vals = [D[acc_layout(lane, i)] for i in range(n_acc)]
            res = _pack(vals, acc_kind)
            out.append(res if len(res) > 1 else res[0])
        return out

    return simulate


_REG = {"f32": types.float32, "f16": types.uint32, "s32": types.int32, "f64": types.float64}
_PTX_T = {"f32": "f32", "f16": "f16", "s32": "s32", "f64": "f64"}


def _mma(name, shape, ab, acc, a_regs, b_regs, acc_regs, a_layout, b_layout, min_arch,
         min_ptx, sass, n_elems=4, operand_type=types.uint32, doc="", acc_layout=None):
    m, n, k = shape
    ab_ptx = {"s8": "s8.s8", "u8": "u8.u8"}.get(ab, f"{ab}.{ab}")
    ptx = (
        f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{_PTX_T[acc]}.{ab_ptx}.{_PTX_T[acc]} "
        "$d, $a, $b, $c;"
    )
    acc_layout = acc_layout or (acc_m8n8_f64 if acc == "f64" else acc_m16n8)
    spec = InstructionSpec(
        name=name,
        family="mma",
        ptx=ptx,
        outputs=(Operand("d", _REG[acc], acc_regs, braced=True),),
        inputs=(
            Operand("a", operand_type, a_regs, f"A fragment ({ab}, row-major {m}x{k})", True),
            Operand("b", operand_type, b_regs, f"B fragment ({ab}, column-major {k}x{n})", True),
            Operand("c", _REG[acc], acc_regs, f"C accumulator ({acc})", True),
        ),
        min_arch=min_arch,
        min_ptx=min_ptx,
        convergent=True,
        sass=sass,
        simulate=make_simulator(shape, ab, ab, acc, a_layout, b_layout, acc_layout, n_elems),
        warp_collective_sim=True,
        doc=doc
        or f"D = A @ B + C on a {m}x{n}x{k} tile, {ab} inputs, {acc} accumulate; warp-collective.",
        extra={"shape": shape, "ab": ab, "acc": acc, "a_layout": a_layout,
               "b_layout": b_layout, "acc_layout": acc_layout},
    )
    return build(spec)


SM75, SM80, SM90 = Arch(7, 5), Arch(8, 0), Arch(9, 0)

mma_m16n8k8_f16_f16 = _mma("mma_m16n8k8_f16_f16", (16, 8, 8), "f16", "f16", 2, 1, 2,
                           acc_m16n8, b_m16n8k8_f16, SM75, (6, 5), ("HMMA",))
mma_m16n8k8_f16_f32 = _mma("mma_m16n8k8_f16_f32", (16, 8, 8), "f16", "f32", 2, 1, 4,
                           acc_m16n8, b_m16n8k8_f16, SM75, (6, 5), ("HMMA",))
mma_m16n8k16_f16_f32 = _mma("mma_m16n8k16_f16_f32", (16, 8, 16), "f16", "f32", 4, 2, 4,
                            a_m16n8k16_16bit, b_m16n8k16_16bit, SM80, (7, 0), ("HMMA",))
mma_m16n8k16_f16_f16 = _mma("mma_m16n8k16_f16_f16", (16, 8, 16), "f16", "f16", 4, 2, 2,
                            a_m16n8k16_16bit, b_m16n8k16_16bit, SM80, (7, 0), ("HMMA",))
mma_m16n8k16_bf16_f32 = _mma("mma_m16n8k16_bf16_f32", (16, 8, 16), "bf16", "f32", 4, 2, 4,
                             a_m16n8k16_16bit, b_m16n8k16_16bit, SM80, (7, 0), ("HMMA",))
mma_m16n8k8_tf32_f32 = _mma("mma_m16n8k8_tf32_f32", (16, 8, 8), "tf32", "f32", 4, 2, 4,
                            a_m16n8k8_tf32, b_m16n8k8_tf32, SM80, (7, 0), ("HMMA",))
mma_m16n8k32_s8_s32 = _mma("mma_m16n8k32_s8_s32", (16, 8, 32), "s8", "s32", 4, 2, 4,
                           a_m16n8k32_8bit, b_m16n8k32_8bit, SM80, (7, 0), ("IMMA",))
mma_m16n8k32_u8_s32 = _mma("mma_m16n8k32_u8_s32", (16, 8, 32), "u8", "s32", 4, 2, 4,
                           a_m16n8k32_8bit, b_m16n8k32_8bit, SM80, (7, 0), ("IMMA",))
mma_m8n8k4_f64 = _mma("mma_m8n8k4_f64", (8, 8, 4), "f64", "f64", 1, 1, 2,
                      a_m8n8k4_f64, b_m8n8k4_f64, SM80, (7, 0), ("DMMA",), n_elems=2,
                      operand_type=types.float64)
# The f64 shapes of PTX ISA 7.8 (sm_90+), SASS DMMA.16x8x4 / DMMA.16x8x8 / DMMA.16x8x16 (not
# m8n8k4 pairs). m16n8k16 extends m16n8k8's layouts along K: A element i at row g + 8 (i % 2),
# k t + 4 (i // 2) for i < 8; B element i at k t + 4 i for i < 4.
mma_m16n8k4_f64 = _mma("mma_m16n8k4_f64", (16, 8, 4), "f64", "f64", 2, 1, 4,
                       a_m16n8k4_f64, b_m8n8k4_f64, SM90, (7, 8), ("DMMA",),
                       operand_type=types.float64, acc_layout=acc_m16n8)
mma_m16n8k8_f64 = _mma("mma_m16n8k8_f64", (16, 8, 8), "f64", "f64", 4, 2, 4,
                       a_m16n8k8_tf32, b_m16n8k8_tf32, SM90, (7, 8), ("DMMA",),
                       operand_type=types.float64, acc_layout=acc_m16n8)
mma_m16n8k16_f64 = _mma("mma_m16n8k16_f64", (16, 8, 16), "f64", "f64", 8, 4, 4,
                        a_m16n8k8_tf32, b_m16n8k8_tf32, SM90, (7, 8), ("DMMA",),
                        operand_type=types.float64, acc_layout=acc_m16n8)

__all__ = [n for n in dir() if n.startswith("mma_")]
