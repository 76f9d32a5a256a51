"""Copies between rows of any 2-byte alignment: the padded path of :mod:`.host` (rows whose
start is no 16-byte multiple are copied into padded rows, worked on there, and the result
copied back into the caller's rows).

One thread per 2- or 4-byte unit of a row's columns and ``UNROLL`` rows at a time, all of
their loads issued before the first store (loads in flight without registers held per byte,
as the row kernels' 16-byte copies have); no per-element index division (CuPy's elementwise
copy of a strided view divides per element and moved ~0.2 TB/s on the H200), and no per-row
setup (cuMemcpy2DAsync moved ~1.5 TB/s for rows of 5000 bytes, less for short rows; perf-notes
r57, r58). Compiled per unit (2 or 4 bytes), never per shape.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int64, types, uint32, uint64

from .. import runner
from ..intrinsics import memory as M
from .host import BYTES

THREADS = 256  # columns (units) a block covers
UNROLL = 16  # rows a thread moves at once: 16 loads in flight before its stores
MAX_GRID_Y = 65535
SIG = (BYTES,) * 2 + (types.int64,) * 4


def copy_rows_ref(dst, src):
    """What the kernel does, for NumPy arrays of one shape: ``dst[...] = src``."""
    np.copyto(dst, src)


@functools.lru_cache(maxsize=None)
def build(unit: int):
    """The copy kernel moving ``unit`` (2 or 4) bytes a thread and row."""
    if unit not in (2, 4):
        raise ValueError(f"padcopy.build: unit must be 2 or 4 bytes, got {unit}")
    ld, st = ((M.ld_global_u16_if, M.st_global_u16_if) if unit == 2 else
              (M.ld_global_u32_if, M.st_global_u32_if))
    dt = types.uint16 if unit == 2 else types.uint32

    @cuda.jit
    def copy_rows_kernel(S, D, width, rows, spitch, dpitch):
        """Rows ``0 .. rows - 1`` of ``width`` units from ``S`` (``spitch`` bytes apart) into
        ``D`` (``dpitch`` bytes apart); block (x, y) covers columns x * THREADS + thread and
        rows y * UNROLL + k, then y + gridDim.y, ..."""
        c = int64(cuda.blockIdx.x) * THREADS + int64(cuda.threadIdx.x)
        if c >= width:
            return
        sa = int64(M.gmem_addr(S, 0)) + c * unit
        da = int64(M.gmem_addr(D, 0)) + c * unit
        v = cuda.local.array(UNROLL, dt)
        r = int64(cuda.blockIdx.y) * UNROLL
        step = int64(cuda.gridDim.y) * UNROLL
        while r < rows:
            for k in range(UNROLL):
                v[k] = ld(uint64(sa + (r + k) * spitch), uint32(r + k < rows))
            for k in range(UNROLL):
                st(uint64(da + (r + k) * dpitch), v[k], uint32(r + k < rows))
            r += step

    copy_rows_kernel.nbk_launch_bounds = (THREADS, 1)
    return copy_rows_kernel


def copy_rows(dst, src, rows: int, width: int, dpitch: int, spitch: int, stream: int, arch):
    """Copy ``rows`` rows of ``width`` bytes from the view ``src`` (rows ``spitch`` bytes apart)
    into the view ``dst`` (``dpitch`` apart), on ``stream``: 4 bytes a thread where both
    starts, both pitches and the width allow, else 2 (every row dtype's element is 2 or 4
    bytes). The views are :class:`arrays.ArrayView`\\ s (NumPy ones in the simulator)."""
    if rows <= 0 or width <= 0:
        return
    unit = 4 if not (dst.ptr | src.ptr | width | (dpitch if rows > 1 else 0) |
                     (spitch if rows > 1 else 0)) % 4 else 2
    kern = build(unit)
    cols = width // unit
    grid = (-(-cols // THREADS), min(-(-rows // UNROLL), MAX_GRID_Y), 1)
    args = [runner.flat(src, np.uint8), runner.flat(dst, np.uint8), np.int64(cols),
            np.int64(rows), np.int64(spitch), np.int64(dpitch)]
    runner.launch_jit(kern, SIG, grid, THREADS, 0, stream, args, ("rows_copy", unit, None),
                      arch)
