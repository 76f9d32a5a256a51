"""Shared-memory matrix descriptors of ``wgmma`` (sm_90a) and the swizzle modes behind them.

A wgmma operand in shared memory is named by a 64-bit descriptor (PTX ISA, "Matrix
Descriptor Format", sm_90 layout):

======  =====================================================================
bits    field
======  =====================================================================
0-13    start address >> 4 (the 4 low bits are zero: 16-byte aligned)
16-29   leading dimension byte offset (LBO) >> 4
32-45   stride dimension byte offset (SBO) >> 4
49-51   matrix base offset (0 when the swizzle atom starts aligned)
62-63   layout type: 0 no swizzle (interleaved core matrices), 1 128-byte,
        2 64-byte, 3 32-byte swizzle
======  =====================================================================

Where element ``(mn, k)`` of an operand lives (``mn`` indexes M of A or N of B), in bytes
from the start address, before the swizzle; ``e`` is the element size, ``span`` the
swizzle width (32/64/128 B), ``T = 16 // e`` elements per 16-byte chunk:

* K-major, no swizzle: 8x16-byte core matrices, rows 16 B apart:
  ``(mn % 8) * 16 + (mn // 8) * SBO + (k*e // 16) * LBO + k*e % 16``
* K-major, swizzled: rows of ``span`` bytes, 8-row atoms SBO apart; LBO is unused:
  ``(mn % 8) * span + (mn // 8) * SBO + k*e``
* MN-major, no swizzle: core matrices of 8 k-rows x T mn-elements:
  ``(mn % T) * e + (mn // T) * SBO + (k % 8) * 16 + (k // 8) * LBO``
* MN-major, swizzled: rows of ``span`` bytes along MN, ``span/e`` elements per row:
  ``(mn % (span/e)) * e + (mn // (span/e)) * LBO + (k % 8) * span + (k // 8) * SBO``

The swizzle then XORs address bits [4, 4+b) with bits [7, 7+b) (b = 1, 2, 3 for 32, 64,
128 B): the 16-byte chunk of a row moves by the row's index within its 8-row atom. These
are CuTe's ``Swizzle<b,4,3>`` atoms and the canonical layouts of the PTX ISA ("Shared
Memory Matrix Layout"); TMA writes the same pattern when its tensor map has that swizzle.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import cuda

# Layout type codes (descriptor bits 62-63), and the swizzle width in bytes of each.
SWIZZLE_NONE, SWIZZLE_128B, SWIZZLE_64B, SWIZZLE_32B = 0, 1, 2, 3
SWIZZLE_BYTES = {SWIZZLE_NONE: 0, SWIZZLE_128B: 128, SWIZZLE_64B: 64, SWIZZLE_32B: 32}
_CODE_OF_BYTES = {v: k for k, v in SWIZZLE_BYTES.items()}

DescFields = namedtuple("DescFields", "start lbo sbo base_offset swizzle")

_U = np.uint64


def _encode(addr, lbo, sbo, swizzle, base_offset):
    # Written once for numba and for Python: every operand becomes uint64 before it meets a
    # constant, because numba types uint64 mixed with int64 as float64.
    a = (_U(addr) >> _U(4)) & _U(0x3FFF)
    lead = (_U(lbo) >> _U(4)) & _U(0x3FFF)
    stride = (_U(sbo) >> _U(4)) & _U(0x3FFF)
    base = _U(base_offset) & _U(7)
    layout = _U(swizzle) & _U(3)
    return a | (lead << _U(16)) | (stride << _U(32)) | (base << _U(49)) | (layout << _U(62))


#: Device function: ``smem_desc(addr, lbo, sbo, swizzle, base_offset)`` -> uint64 descriptor,
#: ``addr`` from ``smem_addr``; fields are masked, not checked (check on the host with
#: :func:`encode_desc`). Inlined into the calling kernel.
smem_desc = cuda.jit(device=True, inline="always")(_encode)


def encode_desc(addr: int, lbo: int, sbo: int, swizzle: int = SWIZZLE_128B,
                base_offset: int = 0) -> int:
    """Host twin of :data:`smem_desc`, with the range checks the device function leaves out."""
    checks = (("addr", addr, 1 << 18), ("lbo", lbo, 1 << 18), ("sbo", sbo, 1 << 18))
    for what, v, limit in checks:
        if not isinstance(v, (int, np.integer)) or v < 0 or v % 16 or v >= limit:
            raise ValueError(f"encode_desc: {what} must be a multiple of 16 in [0, {limit}), "
                             f"got {v!r}")
    if swizzle not in SWIZZLE_BYTES:
        raise ValueError(f"encode_desc: swizzle must be a layout type code "
                         f"{sorted(SWIZZLE_BYTES)} (SWIZZLE_128B=1, ...), got {swizzle!r}")
    if not 0 <= base_offset <= 7:
        raise ValueError(f"encode_desc: base_offset must be in [0, 7], got {base_offset!r}")
    return int(_encode(addr, lbo, sbo, swizzle, base_offset))


def decode_desc(desc: int) -> DescFields:
    """The byte values of a descriptor's fields."""
    d = int(desc) & (2**64 - 1)
    return DescFields(start=(d & 0x3FFF) << 4, lbo=((d >> 16) & 0x3FFF) << 4,
                      sbo=((d >> 32) & 0x3FFF) << 4, base_offset=(d >> 49) & 7,
                      swizzle=(d >> 62) & 3)


def swizzle_code(nbytes: int) -> int:
    """Layout type code of a swizzle width in bytes (0 for none, 32, 64, 128)."""
    if nbytes not in _CODE_OF_BYTES:
        raise ValueError(f"swizzle width must be 0, 32, 64 or 128 bytes, got {nbytes!r}")
    return _CODE_OF_BYTES[nbytes]


def swizzle_address(addr, span: int):
    """Apply the ``span``-byte swizzle (0: none) to shared addresses (int or int array)."""
    if span == 0:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[span]
    return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)


def element_offsets(desc: int, esize: int, mn: int, k: int, mn_major: bool) -> np.ndarray:
    """Swizzled shared addresses (int64, shape ``(mn, k)``) of an operand's elements."""
    f = decode_desc(desc)
    span = SWIZZLE_BYTES[f.swizzle]
    r = np.arange(mn, dtype=np.int64)[:, None]
    c = np.arange(k, dtype=np.int64)[None, :]
    t = 16 // esize
    if not mn_major and span == 0:
        off = (r % 8) * 16 + (r // 8) * f.sbo + (c * esize // 16) * f.lbo + c * esize % 16
    elif not mn_major:
        off = (r % 8) * span + (r // 8) * f.sbo + c * esize
    elif span == 0:
        off = (r % t) * esize + (r // t) * f.sbo + (c % 8) * 16 + (c // 8) * f.lbo
    else:
        per_row = span // esize
        off = (r % per_row) * esize + (r // per_row) * f.lbo + (c % 8) * span + (c // 8) * f.sbo
    return swizzle_address(f.start + off, span)


def dense_tile_strides(mn_major: bool, span: int, esize: int, mn_tile: int, k_tile: int):
    """(LBO, SBO) in bytes for an operand tile stored densely in the canonical layout.

    Swizzled K-major: rows of ``span`` bytes, one per mn (a TMA box of ``span`` inner bytes
    writes this); MN-major: rows of ``span`` bytes along MN, one per k, with further MN
    blocks of ``span`` bytes each ``k_tile * span`` apart. No swizzle: 8x16-byte core
    matrices, MN-adjacent ones 128 B apart, K-adjacent ones a column of them apart.
    """
    t = 16 // esize
    if not mn_major:
        if span == 0:
            return (mn_tile // 8) * 128, 128
        return 16, 8 * span  # LBO is not used by swizzled K-major layouts; 16 keeps it valid
    if span == 0:
        return (mn_tile // t) * 128, 128
    return k_tile * span, 8 * span
