"""Bit-level conversions shared by the simulator implementations and the tests.

Registers are modelled as Python ints holding the raw 32 bits, as the GPU holds them.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)


def u32(x) -> int:
    return int(x) & 0xFFFFFFFF


def f32_bits(x) -> int:
    return int(np.float32(x).view(np.uint32))


def bits_f32(b) -> np.float32:
    return np.uint32(u32(b)).view(np.float32)


def split16(reg) -> tuple:
    r = u32(reg)
    return r & 0xFFFF, r >> 16


def join16(lo, hi) -> int:
    return (int(lo) & 0xFFFF) | ((int(hi) & 0xFFFF) << 16)


def half_bits_to_f64(h, kind: str) -> float:
    """A 16-bit pattern as float64: ``kind`` is "f16" or "bf16"."""
    if kind == "f16":
        return float(np.uint16(h).view(np.float16))
    return float(np.uint16(h).view(BF16))


def f32_to_half_bits(x, kind: str) -> int:
    """Round a float32 to f16 or bf16 (round to nearest even) and return the 16 bits."""
    dt = np.float16 if kind == "f16" else BF16
    with np.errstate(over="ignore"):  # overflow to inf is the defined result
        return int(np.float32(x).astype(dt).view(np.uint16))


def f32_to_tf32_bits(x) -> int:
    """``cvt.rna.tf32.f32``: round to 10 mantissa bits, ties away from zero; NaN stays NaN."""
    b = f32_bits(x)
    if (b & 0x7F800000) == 0x7F800000:  # inf or NaN: keep, clear the dropped bits
        return b & 0xFFFFE000 if (b & 0x7FFFFF) == 0 else (b | 0x400000) & 0xFFFFE000
    return ((b + 0x1000) & 0xFFFFE000) & 0xFFFFFFFF


def tf32_bits_to_f64(b) -> float:
    """What the tensor core reads from a tf32 operand register: the top 19 bits."""
    return float(bits_f32(u32(b) & 0xFFFFE000))


def bytes_of(reg, signed: bool) -> list:
    r = u32(reg)
    vals = [(r >> (8 * i)) & 0xFF for i in range(4)]
    if signed:
        vals = [v - 256 if v >= 128 else v for v in vals]
    return vals


def wrap_s32(x) -> int:
    return ((int(x) + 2**31) % 2**32) - 2**31
