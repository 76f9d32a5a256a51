"""Device-side pieces every row kernel shares: moving a row (or a chunk of one) between global
memory and 32 float32 registers per thread, group reductions, and where a thread works.

A *group* of ``G`` threads (a warp, or a whole block of up to 512) owns one row, or one chunk
of ``G * PER_THREAD`` elements of a long row. Each thread holds ``PER_THREAD`` values in a
local array that the unrolled loops keep in registers, so a kernel reads its input once.

Element ``e`` of a chunk lives in buffer slot ``i`` of thread ``t``:

16-byte slot ``j = i // E`` holds elements ``(j * G + t) * E + i % E``, so consecutive
threads read consecutive 16-byte words. Every row must start 16-byte aligned: the host side
gives misaligned rows a padded copy (:mod:`.host`), the slower safe path.

Padding slots (past the chunk's end) hold the bits ``pad`` and are never stored.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from numba import cuda, float32, int64, uint16, uint32, uint64

from ..intrinsics import convert as C
from ..intrinsics import memory as M
from ..intrinsics.define import define
from ..intrinsics.warp import shfl_bfly_f32

# Between a kernel's statistics pass and its output pass, each held word goes through this
# opaque move: without it LLVM merges the two passes' identical unpacks and keeps all 32
# float32 values alive across the reduction (bf16 rms_norm: 103 registers, 2 blocks of 256
# per SM), which defeats holding the row as packed words.
fresh_u32 = define("rows_fresh_u32", "mov.b32 $d, $x;", outputs=("d:u32",), inputs=("x:u32",),
                   side_effect=True, simulate=lambda x: np.uint32(x),
                   doc="an opaque copy of a word: the compiler must re-derive what uses it")

PER_THREAD = 32  # float32 values a thread holds: 32 regs, a 16-bit row of 8192 in 256 threads
MAX_THREADS = 512  # launch bound: ptxas may give each thread up to 128 registers
MAX_WARPS = MAX_THREADS // 32


def launch_bounds(words_held: int):
    """Launch bounds for a kernel holding ``words_held`` uint32 per thread across its
    reduction: at most 64 registers (2 blocks of 512, 4 of 256 per SM) when that fits."""
    return (MAX_THREADS, 2) if words_held <= 16 else (MAX_THREADS,)
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


def make_io(kind: str, hw_bf16: bool, row_kind: str | None = None):
    """Device functions moving one thread's share of a chunk as raw 32-bit words.

    A thread's ``PER_THREAD`` values stay in ``words(kind)`` uint32 registers in their memory
    format (two per word for 16-bit kinds: half the registers of float32, so twice the
    blocks fit on an SM) and are converted when used. Returns a namespace with
    ``load(addr, m, t, G, raw, pad)`` (``pad``: bits of the value padding slots read as),
    ``store(addr, m, t, G, raw)``, ``get(raw, i)`` (slot ``i`` as float32), ``put(raw, i, x)``
    (round x to the kind and write slot ``i``), ``round_to(x)``, ``first(addr)`` (element 0
    as float32) and ``elem(i, t, G)`` (slot ``i``'s element in the chunk). ``row_kind``: the
    kind whose vector layout to follow (a float32 weight beside a bf16 row puts the same
    elements in the same slots: two 16-byte loads per bf16 vector).
    """
    esz = ELEMENT_BYTES[kind]
    E = 16 // esz  # elements in one 16-byte access of this kind
    S = 16 // ELEMENT_BYTES[row_kind or kind]  # elements per slot group of the row layout
    if S % E:
        raise ValueError(f"make_io: {kind} cannot follow the layout of {row_kind}")
    V = PER_THREAD // S
    P = PER_THREAD
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

        if hw_bf16:
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
        def get(raw, i):
            w = raw[i // 2]
            return to_f32(w & 0xFFFF) if i % 2 == 0 else to_f32(w >> 16)

        @dev
        def put(raw, i, x):
            w = raw[i // 2]
            if i % 2 == 0:
                raw[i // 2] = uint32((w & 0xFFFF0000) | bits(x))
            else:
                raw[i // 2] = uint32((w & 0xFFFF) | (bits(x) << 16))

        @dev
        def ld1(a, ok, pad):
            return uint32(M.ld_global_u16_if(uint64(a), uint32(ok))) if ok else uint32(pad)

        @dev
        def st1(a, h, ok):
            M.st_global_u16_if(uint64(a), uint16(h), uint32(ok))

        @dev
        def slot_bits(raw, i):
            return (raw[i // 2] >> (16 * (i % 2))) & 0xFFFF

        @dev
        def set_slot(raw, i, h):
            if i % 2 == 0:
                raw[i // 2] = uint32((raw[i // 2] & 0xFFFF0000) | h)
            else:
                raw[i // 2] = uint32((raw[i // 2] & 0xFFFF) | (h << 16))
    else:
        @dev
        def get(raw, i):
            return to_f32(raw[i])

        @dev
        def put(raw, i, x):
            raw[i] = bits(x)

        @dev
        def ld1(a, ok, pad):
            return M.ld_global_u32_if(uint64(a), uint32(ok)) if ok else uint32(pad)

        @dev
        def st1(a, h, ok):
            M.st_global_u32_if(uint64(a), uint32(h), uint32(ok))

        @dev
        def slot_bits(raw, i):
            return raw[i]

        @dev
        def set_slot(raw, i, h):
            raw[i] = uint32(h)

    @dev
    def round_to(x):
        return to_f32(bits(x))

    @dev
    def refresh(raw):
        for q in range(P * esz // 4):
            raw[q] = fresh_u32(raw[q])

    @dev
    def first(addr):
        return to_f32(ld1(addr, True, 0))

    @dev
    def elem(i, t, G):
        return ((i // S) * G + t) * S + i % S

    @dev
    def load(addr, m, t, G, raw, pad):
        for j in range(V):
            e0 = (j * G + t) * S
            if e0 + S <= m:
                for q in range(S // E):
                    w = M.ld_global_v4(uint64(addr + (e0 + q * E) * esz))
                    base = (j * S + q * E) * esz // 4
                    raw[base] = w[0]
                    raw[base + 1] = w[1]
                    raw[base + 2] = w[2]
                    raw[base + 3] = w[3]
            else:
                for k in range(S):
                    set_slot(raw, j * S + k, ld1(addr + (e0 + k) * esz, e0 + k < m, pad))

    @dev
    def store(addr, m, t, G, raw):
        for j in range(V):
            e0 = (j * G + t) * S
            if e0 + S <= m:
                for q in range(S // E):
                    base = (j * S + q * E) * esz // 4
                    M.st_global_v4(uint64(addr + (e0 + q * E) * esz),
                                   (raw[base], raw[base + 1], raw[base + 2], raw[base + 3]))
            else:
                for k in range(S):
                    st1(addr + (e0 + k) * esz, slot_bits(raw, j * S + k), e0 + k < m)

    return SimpleNamespace(load=load, store=store, get=get, put=put, round_to=round_to,
                           first=first, elem=elem, refresh=refresh, words=P * esz // 4)


def words(kind: str) -> int:
    """uint32 registers holding one thread's PER_THREAD values of ``kind``."""
    return PER_THREAD * ELEMENT_BYTES[kind] // 4


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
PAD_NEG_INF = {"f32": 0xFF800000, "bf16": 0xFF80, "f16": 0xFC00}  # -inf bits of each kind
