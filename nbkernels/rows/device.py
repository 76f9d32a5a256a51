"""Device-side pieces every row kernel shares: moving a row (or a chunk of one) between global
memory and 32 float32 registers per thread, group reductions, and where a thread works.

A *group* of ``G`` threads (a warp, or a whole block of up to 512) owns one row, or one chunk
of ``G * PER_THREAD`` elements of a long row. Each thread holds ``PER_THREAD`` values in a
local array that the unrolled loops keep in registers, so a kernel reads its input once.

Element ``e`` of a chunk lives in buffer slot ``i`` of thread ``t``:

* vector mode (rows 16-byte aligned): 16-byte slot ``j = i // E`` holds elements
  ``(j * G + t) * E + i % E``, so consecutive threads read consecutive 16-byte words;
* scalar mode (anything else): ``e = i * G + t``, consecutive threads read consecutive
  elements (the slower safe path for misaligned rows).

Padding slots (past the chunk's end) read as ``pad`` and are never stored.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, int64, uint16, uint32, uint64

from ..intrinsics import convert as C
from ..intrinsics import memory as M
from ..intrinsics.warp import shfl_bfly_f32

PER_THREAD = 32  # float32 values a thread holds: 32 regs, a 16-bit row of 8192 in 256 threads
MAX_THREADS = 512  # launch bound: ptxas may give each thread up to 128 registers
MAX_WARPS = MAX_THREADS // 32
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


def dev(fn):
    return cuda.jit(device=True, inline="always")(fn)


@dev
def bf16_bits_sw(x):
    """float32 -> bfloat16 bits, round to nearest even, in integer code (sm_75 has no cvt)."""
    b = C.f32_to_bits(x)
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return uint32((b >> 16) | 0x40)  # quiet NaN, sign kept
    return uint32((int64(b) + 0x7FFF + ((b >> 16) & 1)) >> 16)


def make_io(kind: str, vec: bool, hw_bf16: bool, row_kind: str | None = None):
    """``(load, store, round_to, elem)`` device functions for one element kind and mode.

    ``load(addr, m, t, G, buf, pad)`` fills ``buf`` from the chunk at ``addr`` (``m`` valid
    elements), ``store(addr, m, t, G, buf)`` writes the valid ones back, ``round_to(x)``
    rounds a float32 to the kind's precision, ``elem(i, t, G)`` is slot ``i``'s element.
    ``row_kind``: the kind whose vector layout to follow (a float32 weight beside a bf16 row
    must put the same elements in the same slots: two 16-byte loads per bf16 vector).
    """
    esz = ELEMENT_BYTES[kind]
    E = 16 // esz  # elements in one 16-byte access of this kind
    S = 16 // ELEMENT_BYTES[row_kind or kind]  # elements per slot group of the row layout
    if S % E:
        raise ValueError(f"make_io: {kind} cannot follow the layout of {row_kind}")
    V = PER_THREAD // S
    P = PER_THREAD

    if kind == "f32":
        @dev
        def ld1(a, ok, pad):
            v = M.ld_global_f32_if(uint64(a), uint32(ok))
            return v if ok else pad

        @dev
        def st1(a, x, ok):
            M.st_global_f32_if(uint64(a), x, uint32(ok))

        @dev
        def round_to(x):
            return x

        @dev
        def unpack(w, buf, o):
            for q in range(4):
                buf[o + q] = C.bits_to_f32(w[q])

        @dev
        def pack(buf, o):
            return (C.f32_to_bits(buf[o]), C.f32_to_bits(buf[o + 1]),
                    C.f32_to_bits(buf[o + 2]), C.f32_to_bits(buf[o + 3]))
    else:
        if kind == "bf16":
            @dev
            def to_f32(h):
                return C.bits_to_f32(uint32(h) << 16)

            if hw_bf16:
                @dev
                def bits16(x):
                    return C.cvt_f32_to_bf16(x)

                @dev
                def pair(lo, hi):
                    return C.pack_bf16x2(lo, hi)
            else:
                @dev
                def bits16(x):
                    return uint16(bf16_bits_sw(x))

                @dev
                def pair(lo, hi):
                    return uint32(bf16_bits_sw(lo) | (bf16_bits_sw(hi) << 16))
        else:
            @dev
            def to_f32(h):
                return C.f16_bits_to_f32(uint16(h))

            @dev
            def bits16(x):
                return C.cvt_f32_to_f16(x)

            @dev
            def pair(lo, hi):
                return C.pack_f16x2(lo, hi)

        @dev
        def ld1(a, ok, pad):
            v = to_f32(M.ld_global_u16_if(uint64(a), uint32(ok)))
            return v if ok else pad

        @dev
        def st1(a, x, ok):
            M.st_global_u16_if(uint64(a), bits16(x), uint32(ok))

        @dev
        def round_to(x):
            return to_f32(bits16(x))

        @dev
        def unpack(w, buf, o):
            for q in range(4):
                buf[o + 2 * q] = to_f32(uint16(w[q] & 0xFFFF))
                buf[o + 2 * q + 1] = to_f32(uint16(w[q] >> 16))

        @dev
        def pack(buf, o):
            return (pair(buf[o], buf[o + 1]), pair(buf[o + 2], buf[o + 3]),
                    pair(buf[o + 4], buf[o + 5]), pair(buf[o + 6], buf[o + 7]))

    if vec:
        @dev
        def elem(i, t, G):
            return ((i // S) * G + t) * S + i % S

        @dev
        def load(addr, m, t, G, buf, pad):
            for j in range(V):
                e0 = (j * G + t) * S
                if e0 + S <= m:
                    for q in range(S // E):
                        unpack(M.ld_global_v4(uint64(addr + (e0 + q * E) * esz)), buf,
                               j * S + q * E)
                else:
                    for k in range(S):
                        buf[j * S + k] = ld1(addr + (e0 + k) * esz, e0 + k < m, pad)

        @dev
        def store(addr, m, t, G, buf):
            for j in range(V):
                e0 = (j * G + t) * S
                if e0 + S <= m:
                    for q in range(S // E):
                        M.st_global_v4(uint64(addr + (e0 + q * E) * esz), pack(buf, j * S + q * E))
                else:
                    for k in range(S):
                        st1(addr + (e0 + k) * esz, buf[j * S + k], e0 + k < m)
    else:
        @dev
        def elem(i, t, G):
            return i * G + t

        @dev
        def load(addr, m, t, G, buf, pad):
            for i in range(P):
                e = i * G + t
                buf[i] = ld1(addr + e * esz, e < m, pad)

        @dev
        def store(addr, m, t, G, buf):
            for i in range(P):
                e = i * G + t
                st1(addr + e * esz, buf[i], e < m)

    return load, store, round_to, elem


@dev
def warp_sum(v):
    v += shfl_bfly_f32(v, 16)
    v += shfl_bfly_f32(v, 8)
    v += shfl_bfly_f32(v, 4)
    v += shfl_bfly_f32(v, 2)
    v += shfl_bfly_f32(v, 1)
    return v  # the same bits in every lane: each step adds the same two values, a + b == b + a


@dev
def warp_max(v):
    v = max(v, shfl_bfly_f32(v, 16))
    v = max(v, shfl_bfly_f32(v, 8))
    v = max(v, shfl_bfly_f32(v, 4))
    v = max(v, shfl_bfly_f32(v, 2))
    v = max(v, shfl_bfly_f32(v, 1))
    return v


@dev
def group_sum(v, G, red, slot):
    """Sum over the ``G`` threads of the caller's group; every thread gets the same value.
    ``red`` is a (slots, MAX_WARPS) shared array; each slot may be used once per kernel."""
    v = warp_sum(v)
    if G > 32:  # G is the same for the whole block: the barrier is reached by every thread
        tb = cuda.threadIdx.x
        if tb % 32 == 0:
            red[slot, tb // 32] = v
        cuda.syncthreads()
        first = (tb // G) * (G // 32)
        v = float32(0)
        for w in range(G // 32):
            v += red[slot, first + w]
    return v


@dev
def group_max(v, G, red, slot):
    v = warp_max(v)
    if G > 32:
        tb = cuda.threadIdx.x
        if tb % 32 == 0:
            red[slot, tb // 32] = v
        cuda.syncthreads()
        first = (tb // G) * (G // 32)
        v = float32(-math.inf)
        for w in range(G // 32):
            v = max(v, red[slot, first + w])
    return v


@dev
def locate(phase, G, chunks):
    """(row, chunk, thread in group). Phase 0: a block holds blockDim / G whole rows.
    Phases 1 and 2 (long rows): block b is chunk b % chunks of row b // chunks."""
    tb = cuda.threadIdx.x
    if phase == 0:
        return int64(cuda.blockIdx.x) * (cuda.blockDim.x // G) + tb // G, int64(0), tb % G
    b = int64(cuda.blockIdx.x)
    return b // chunks, b % chunks, tb % G


NEG_INF = np.float32(-np.inf)
