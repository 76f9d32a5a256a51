"""Device-side pieces every row kernel shares: staging a row (or a chunk of one) in shared
memory, reading it back 16 bytes at a time, group reductions, and where a thread works.

A *group* of ``G`` threads (a warp, or a whole block of up to 512) owns one row, or one chunk
of ``G * PER_THREAD`` elements of a long row. Each thread copies its ``PER_THREAD`` elements
from global to shared memory with ``cp.async`` (no registers held while the bytes are in
flight, so how much of the row is in flight is bounded by shared memory, not by registers) and
reads them back with 16-byte shared loads for each pass over the row: the row is read from
global memory once.

Elements sit in slot groups of ``S`` (16 bytes of the row's dtype): group ``j`` of thread
``t`` holds elements ``(j * G + t) * S .. + S - 1``, so consecutive threads move consecutive
16-byte words. Every row must start 16-byte aligned: the host side gives misaligned rows a
padded copy (:mod:`.host`), the slower safe path. Elements past the chunk's end are zero-filled
by ``cp.async`` and never stored.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from numba import cuda, float32, int64, uint16, uint32, uint64

from ..intrinsics import convert as C
from ..intrinsics import cp_async as A
from ..intrinsics import memory as M
from ..intrinsics.warp import shfl_bfly_f32

PER_THREAD = 32  # elements a thread stages per buffer: 64 B of bf16, 128 B of float32
MAX_THREADS = 512
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


def make_io(kind: str, sm80: bool, row_kind: str | None = None):
    """Device functions for one element kind, following the slot layout of ``row_kind``
    (default: its own; a float32 weight beside a bf16 row has 8-element slot groups of 32
    bytes). Groups are moved through ``tmp``, a local array of ``gw`` words:

    ``issue(sh, base, addr, m, t, G)`` cp.async this thread's groups of the chunk at global
    ``addr`` (``m`` valid elements) into ``sh`` at word ``base``; ``fetch(sh, base, t, G, j,
    tmp)`` / ``put_back(...)`` move group ``j`` between shared memory and ``tmp``;
    ``gload(addr, m, t, G, j, tmp)`` / ``gstore(...)`` move it between global memory and
    ``tmp`` directly; ``get(tmp, k)`` is element ``k`` of the group as float32, ``put(tmp, k,
    x)`` rounds ``x`` to the kind and writes it; ``elem(j, k, t, G)`` is its index in the chunk;
    ``first(addr)`` reads element 0.
    """
    esz = ELEMENT_BYTES[kind]
    E = 16 // esz  # elements in one 16-byte access of this kind
    S = 16 // ELEMENT_BYTES[row_kind or kind]  # elements per slot group of the row layout
    if S % E:
        raise ValueError(f"make_io: {kind} cannot follow the layout of {row_kind}")
    GW = S * esz // 4  # words per slot group
    V = PER_THREAD // S
    half = esz == 2

    if kind == "f32":
        @dev
        def to_f32(h):
            return C.bits_to_f32(h)

        @dev
        def bits(x):
            return C.f32_to_bits(x)
    elif kind == "bf16":
        @dev
        def to_f32(h):
            return C.bits_to_f32(uint32(h) << 16)

        if sm80:
            @dev
            def bits(x):
                return uint32(C.cvt_f32_to_bf16(x))
        else:
            bits = bf16_bits_sw
    else:
        @dev
        def to_f32(h):
            return C.f16_bits_to_f32(uint16(h))

        @dev
        def bits(x):
            return uint32(C.cvt_f32_to_f16(x))

    if half:
        @dev
        def get(tmp, k):
            w = tmp[k // 2]
            return to_f32(w & 0xFFFF) if k % 2 == 0 else to_f32(w >> 16)

        @dev
        def put(tmp, k, x):
            w = tmp[k // 2]
            if k % 2 == 0:
                tmp[k // 2] = uint32((w & 0xFFFF0000) | bits(x))
            else:
                tmp[k // 2] = uint32((w & 0xFFFF) | (bits(x) << 16))

        @dev
        def ld1(a, ok):
            return uint32(M.ld_global_u16_if(uint64(a), uint32(ok)))

        @dev
        def st1(a, h, ok):
            M.st_global_u16_if(uint64(a), uint16(h), uint32(ok))

        @dev
        def slot_bits(tmp, k):
            return (tmp[k // 2] >> (16 * (k % 2))) & 0xFFFF

        @dev
        def set_slot(tmp, k, h):
            if k % 2 == 0:
                tmp[k // 2] = uint32((tmp[k // 2] & 0xFFFF0000) | h)
            else:
                tmp[k // 2] = uint32((tmp[k // 2] & 0xFFFF) | (h << 16))
    else:
        @dev
        def get(tmp, k):
            return to_f32(tmp[k])

        @dev
        def put(tmp, k, x):
            tmp[k] = bits(x)

        @dev
        def ld1(a, ok):
            return M.ld_global_u32_if(uint64(a), uint32(ok))

        @dev
        def st1(a, h, ok):
            M.st_global_u32_if(uint64(a), uint32(h), uint32(ok))

        @dev
        def slot_bits(tmp, k):
            return tmp[k]

        @dev
        def set_slot(tmp, k, h):
            tmp[k] = uint32(h)

    @dev
    def first(addr):
        return to_f32(ld1(addr, True))

    @dev
    def elem(j, k, t, G):
        return (j * G + t) * S + k

    @dev
    def fetch(sh, base, t, G, j, tmp):
        for q in range(GW // 4):
            w = M.ld_shared_v4(M.smem_addr(sh, base + (j * G + t) * GW + q * 4))
            for i in range(4):
                tmp[q * 4 + i] = w[i]

    @dev
    def put_back(sh, base, t, G, j, tmp):
        for q in range(GW // 4):
            M.st_shared_v4(M.smem_addr(sh, base + (j * G + t) * GW + q * 4),
                           (tmp[q * 4], tmp[q * 4 + 1], tmp[q * 4 + 2], tmp[q * 4 + 3]))

    @dev
    def gload(addr, m, t, G, j, tmp):
        for q in range(GW // 4):
            e = (j * G + t) * S + q * E
            if e + E <= m:
                w = M.ld_global_v4(uint64(addr + e * esz))
                for i in range(4):
                    tmp[q * 4 + i] = w[i]
            else:
                for k in range(E):
                    set_slot(tmp, q * E + k, ld1(addr + (e + k) * esz, e + k < m))

    @dev
    def gstore(addr, m, t, G, j, tmp):
        for q in range(GW // 4):
            e = (j * G + t) * S + q * E
            if e + E <= m:
                M.st_global_v4(uint64(addr + e * esz), (tmp[q * 4], tmp[q * 4 + 1],
                                                        tmp[q * 4 + 2], tmp[q * 4 + 3]))
            else:
                for k in range(E):
                    st1(addr + (e + k) * esz, slot_bits(tmp, q * E + k), e + k < m)

    if sm80:
        @dev
        def issue(sh, base, addr, m, t, G):
            for j in range(V):
                for q in range(GW // 4):
                    e = (j * G + t) * S + q * E
                    nbytes = min(max(m - e, 0), E) * esz  # past the end: zero-filled, not read
                    A.cp_async_cg(M.smem_addr(sh, base + (j * G + t) * GW + q * 4),
                                  uint64(addr + e * esz), 16, uint32(nbytes))
    else:  # sm_75 has no cp.async: through registers (zero past the end, as cp.async fills)
        @dev
        def issue(sh, base, addr, m, t, G):
            tmp = cuda.local.array(GW, uint32)
            for j in range(V):
                gload(addr, m, t, G, j, tmp)
                put_back(sh, base, t, G, j, tmp)

    # wait(): this thread's staged groups are then visible to it (each thread reads back only
    # what it wrote: no barrier needed); without cp.async they already are
    if sm80:
        @dev
        def wait():
            A.cp_async_commit_group()
            A.cp_async_wait_all()
    else:
        @dev
        def wait():
            pass

    @dev
    def full(j, t, G, m):
        """Group ``j`` holds no padding: its elements need no mask."""
        return (j * G + t) * S + S <= m

    @dev
    def gload_all(addr, m, t, G, raw):
        """All groups into ``raw`` (``words`` words, element i at slot i): every load issued
        before any use, the most bytes in flight a thread can have without staging."""
        for j in range(V):
            for q in range(GW // 4):
                e = (j * G + t) * S + q * E
                if e + E <= m:
                    w = M.ld_global_v4(uint64(addr + e * esz))
                    for i in range(4):
                        raw[j * GW + q * 4 + i] = w[i]
                else:
                    for k in range(E):
                        set_slot(raw, j * S + q * E + k, ld1(addr + (e + k) * esz, e + k < m))

    @dev
    def gstore_all(addr, m, t, G, raw):
        for j in range(V):
            for q in range(GW // 4):
                e = (j * G + t) * S + q * E
                b = j * GW + q * 4
                if e + E <= m:
                    M.st_global_v4(uint64(addr + e * esz),
                                   (raw[b], raw[b + 1], raw[b + 2], raw[b + 3]))
                else:
                    for k in range(E):
                        st1(addr + (e + k) * esz, slot_bits(raw, j * S + q * E + k), e + k < m)

    return SimpleNamespace(issue=issue, wait=wait, full=full, gload_all=gload_all,
                           gstore_all=gstore_all, fetch=fetch, put_back=put_back, gload=gload,
                           gstore=gstore, get=get, put=put, first=first,
                           elem=elem, gw=GW, groups=V, slot=S, words=PER_THREAD * esz // 4)


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
def locate(phase, G, chunks, n):
    """(row, chunk, thread in group, chunk's first element, elements in the chunk). Phase 0:
    a block holds blockDim / G whole rows. Phases 1 and 2 (long rows): block b is chunk
    b % chunks of row b // chunks."""
    tb = cuda.threadIdx.x
    if phase == 0:
        row, c = int64(cuda.blockIdx.x) * (cuda.blockDim.x // G) + tb // G, int64(0)
    else:
        b = int64(cuda.blockIdx.x)
        row, c = b // chunks, b % chunks
    c0 = c * G * PER_THREAD
    return row, c, tb % G, c0, min(n - c0, G * PER_THREAD)


NEG_INF = np.float32(-np.inf)
