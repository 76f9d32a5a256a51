"""Device-side pieces every row kernel shares: staging a row (or a chunk of one) in shared
memory, reading it back 16 bytes at a time, group reductions, and where a thread works.

A *group* of ``G`` threads (a warp, or a whole block of up to 512) owns one row, or one chunk
of ``G * P`` elements of a long row (``P``: the kernel's elements per thread, 32 or 64).
Each thread copies its ``P`` elements from global to shared memory with ``cp.async`` (no
registers held while the bytes are in flight, so how much of the row is in flight is bounded
by shared memory, not by registers) and reads them back with 16-byte shared loads for each
pass over the row: the row is read from global memory once.

Elements sit in slot groups of ``S`` (16 bytes of the row's dtype): group ``j`` of thread
``t`` holds elements ``(j * G + t) * S .. + S - 1``, so consecutive threads move consecutive
16-byte words. Every row must start 16-byte aligned: the host side gives misaligned rows a
padded copy (:mod:`.host`), the slower safe path, but where a kernel is built ``shifted``
(softmax's): that one works on a misaligned row from the 16-byte boundary before it, masking
the head (``store_group_from`` writes none of it). Elements past the chunk's end are
zero-filled by ``cp.async`` and never stored.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from numba import cuda, float32, int32, int64, uint16, uint32, uint64

from ..intrinsics import convert as C
from ..intrinsics import cp_async as A
from ..intrinsics import memory as M
from ..intrinsics.define import define
from ..intrinsics.warp import bar_sync, shfl_bfly_f32

PER_THREAD = 32  # elements a thread stages per buffer by default: 64 B of bf16, 128 B of float32
#: what a kernel may hold instead (its ``nbk_per_thread``), a multiple of 4 up to 64:
#: layer_norm's 16-bit kernels on sm_80+ stage 64, 128 B a thread as float32's 32 (perf-notes
#: r13), and so does 16-bit rms_norm's second build (rms_norm_kernel.WIDE_PER_THREAD,
#: perf-notes r27); rows on a warp or a 64-thread block take builds of as many whole slot
#: groups a thread as they need (config.narrow_per_thread, perf-notes r54-r55)
MAX_PER_THREAD = 64
MAX_THREADS = 512
MAX_WARPS = MAX_THREADS // 32
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


def dev(fn):
    return cuda.jit(device=True, inline="always")(fn)


@dev
def staging_base(sh):
    """The 32-bit shared address of the dynamic staging array ``sh``: what the device
    functions below take as ``sh``. Read once per kernel: cvta.to.shared in the row loop was
    ~8 instructions each time (S2R of the CTA's window, sasscount)."""
    return uint32(M.smem_addr(sh, 0))


@dev
def sword(sh, w):
    """32-bit shared address of word ``w`` of the staging array at ``sh``, in 32-bit
    arithmetic (index math in 64 bits cost registers in the row loop; shared memory is far
    below 4 GB)."""
    return uint32(sh + uint32(w) * uint32(4))


@dev
def bf16_bits_sw(x):
    """float32 -> bfloat16 bits, round to nearest even, in integer code (sm_75 has no cvt)."""
    b = C.f32_to_bits(x)
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return uint32((b >> 16) | 0x40)  # quiet NaN, sign kept
    return uint32((int64(b) + 0x7FFF + ((b >> 16) & 1)) >> 16)


#: ``n`` unchanged, but a value the compiler must recompute each row: the masks and offsets
#: of a thread's partial groups depend only on (thread, n), so LLVM hoisted all of them out of
#: the row loop and kept them live across it (128 registers and spills on sm_90a); derived
#: from this per row they stay in the partial path
opaque = define("nbk_rows_opaque", "mov.b64 $d, $x;", outputs=("d:s64",), inputs=("x:s64",),
                side_effect=True, simulate=lambda x: np.int64(x),
                doc="x, through a volatile mov (no hoisting or merging across it).")


#: a * b + c, one IMAD (mad_lo: 32 bits) or IMAD.WIDE.U32 (mad_wide: a 64-bit c and result):
#: the address of slot group j as (group stride) * j + (group 0's address). As inline asm
#: LLVM cannot take j * stride apart and hoist it: written as plain arithmetic, the 3-7
#: group offsets of a thread (64-bit ones for global addresses) were computed once and kept
#: live across the row loop (+7 registers on rms_norm bf16, spills in layer_norm f32)
mad_lo = define("nbk_rows_mad_lo", "mad.lo.u32 $d, $a, $b, $c;", outputs=("d:u32",),
                inputs=("a:u32", "b:u32", "c:u32"),
                simulate=lambda a, b, c: np.uint32((int(a) * int(b) + int(c)) & 0xFFFFFFFF),
                doc="a * b + c, 32 bits.")
mad_wide = define("nbk_rows_mad_wide", "mad.wide.u32 $d, $a, $b, $c;", outputs=("d:u64",),
                  inputs=("a:u32", "b:u32", "c:u64"),
                  simulate=lambda a, b, c: np.uint64((int(a) * int(b) + int(c)) & (2**64 - 1)),
                  doc="a * b (32 x 32 bits, a 64-bit product) + c (64 bits).")


def make_io(kind: str, sm80: bool, row_kind: str | None = None,
            per_thread: int = PER_THREAD):
    """Device functions for one element kind, following the slot layout of ``row_kind``
    (default: its own; a float32 weight beside a bf16 row has 8-element slot groups of 32
    bytes), for threads that stage ``per_thread`` elements of a row. Groups are moved through
    ``tmp``, a local array of ``gw`` words:

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
    V = per_thread // S
    if per_thread % S or not V:
        raise ValueError(f"make_io: {per_thread} elements a thread are no whole number of "
                         f"{S}-element slot groups")
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
            w = M.ld_shared_v4(sword(sh, base + (j * G + t) * GW + q * 4))
            for i in range(4):
                tmp[q * 4 + i] = w[i]

    @dev
    def put_back(sh, base, t, G, j, tmp):
        for q in range(GW // 4):
            M.st_shared_v4(sword(sh, base + (j * G + t) * GW + q * 4),
                           (tmp[q * 4], tmp[q * 4 + 1], tmp[q * 4 + 2], tmp[q * 4 + 3]))

    # the elements of a 16-byte access past ``m``: one address, constant offsets, and the
    # count left compared with each element's offset in 32 bits (a 64-bit address and
    # compare per element kept 16 more registers live in softmax's partial stores)
    @dev
    def gload(addr, m, t, G, j, tmp):
        for q in range(GW // 4):
            e = (j * G + t) * S + q * E
            g = addr + e * esz
            left = int32(m - e)
            if left >= E:
                w = M.ld_global_v4(uint64(g))
                for i in range(4):
                    tmp[q * 4 + i] = w[i]
            else:
                for k in range(E):
                    set_slot(tmp, q * E + k, ld1(g + k * esz, k < left))

    @dev
    def gstore(addr, m, t, G, j, tmp):
        for q in range(GW // 4):
            e = (j * G + t) * S + q * E
            g = addr + e * esz
            left = int32(m - e)
            if left >= E:
                M.st_global_v4(uint64(g), (tmp[q * 4], tmp[q * 4 + 1], tmp[q * 4 + 2],
                                           tmp[q * 4 + 3]))
            else:
                for k in range(E):
                    st1(g + k * esz, slot_bits(tmp, q * E + k), k < left)

    @dev
    def gstore_from(addr, lo, m, t, G, j, tmp):
        """:func:`gstore` of only the elements ``lo`` to ``m`` (a shifted row's first group
        holds the row before's last elements: perf-notes r59)."""
        for q in range(GW // 4):
            e = (j * G + t) * S + q * E
            g = addr + e * esz
            left, below = int32(m - e), int32(lo - e)
            if left >= E and below <= 0:
                M.st_global_v4(uint64(g), (tmp[q * 4], tmp[q * 4 + 1], tmp[q * 4 + 2],
                                           tmp[q * 4 + 3]))
            else:
                for k in range(E):
                    st1(g + k * esz, slot_bits(tmp, q * E + k), k < left and k >= below)

    @dev
    def gaddr(sh, base, t, G, j):
        """32-bit shared address of this thread's slot group ``j`` at word ``base``."""
        return mad_lo(uint32(G) * uint32(GW * 4), uint32(j),
                      uint32(sh) + (uint32(base) + uint32(t) * uint32(GW)) * uint32(4))

    @dev
    def group_at(addr, t, G, j):
        """Global address of this thread's slot group ``j`` of the row at ``addr``."""
        return mad_wide(uint32(G) * uint32(S * esz), uint32(j), uint64(addr + t * (S * esz)))

    @dev
    def thread_full(t, G, m):
        """Every element of this thread's groups lies below ``m`` (its last group is full):
        fixed per thread for a whole kernel of rows of one length; true for every thread
        when ``m == G * per_thread``. In 32 bits: ``m`` is at most a group's capacity."""
        return (int32(V - 1) * int32(G) + int32(t) + int32(1)) * int32(S) <= int32(m)

    if sm80:
        @dev
        def issue(sh, base, addr, m, t, G):
            if thread_full(t, G, m):  # 16-byte copies, no byte counts (a constant source
                # size of 16: ptxas drops the zero-fill, LDGSTS.E.BYPASS.128)
                for j in range(V):
                    a, g = gaddr(sh, base, t, G, j), group_at(addr, t, G, j)
                    for q in range(GW // 4):
                        A.cp_async_cg(a + uint32(q * 16), g + uint64(q * 16), 16, uint32(16))
                return
            # byte counts and offsets per row (hoisted, 8 of them spilled float32 kernels; with
            # the full path beside this one, 20-30 registers of offsets stayed live)
            m, t, G = opaque(m), opaque(t), opaque(G)
            for j in range(V):
                for q in range(GW // 4):
                    e = (j * G + t) * S + q * E
                    nbytes = min(max(m - e, 0), E) * esz  # past the end: zero-filled, not read
                    A.cp_async_cg(sword(sh, base + (j * G + t) * GW + q * 4),
                                  uint64(addr + e * esz), 16, uint32(nbytes))
    else:  # sm_75 has no cp.async: through registers (zero past the end, as cp.async fills)
        @dev
        def issue(sh, base, addr, m, t, G):
            m, t, G = opaque(m), opaque(t), opaque(G)  # offsets per row, as above
            tmp = cuda.local.array(GW, uint32)
            for j in range(V):
                gload(addr, m, t, G, j, tmp)
                put_back(sh, base, t, G, j, tmp)

    # wait(): this thread's staged groups are then visible to it (each thread reads back only
    # what it wrote: no barrier needed); without cp.async they already are
    # commit(): close what this thread issued since the last commit into one group;
    # wait_behind(k): commit, then wait for every group but the newest k (the next rows'
    # copies stay in flight while the current row is worked on)
    if sm80:
        @dev
        def wait():
            A.cp_async_commit_group()
            A.cp_async_wait_all()

        @dev
        def commit():
            A.cp_async_commit_group()

        @dev
        def wait_behind(k):
            """Commit, then wait for every group but the newest ``k`` (0-3; a row ring
            with ``k`` items staged ahead of the one worked on)."""
            A.cp_async_commit_group()
            if k >= 3:
                A.cp_async_wait_group(3)
            elif k == 2:
                A.cp_async_wait_group(2)
            elif k == 1:
                A.cp_async_wait_group(1)
            else:
                A.cp_async_wait_group(0)
    else:
        @dev
        def wait():
            pass

        @dev
        def commit():
            pass

        @dev
        def wait_behind(k):
            pass

    @dev
    def full(j, t, G, m):
        """Group ``j`` holds no padding: its elements need no mask."""
        return (j * G + t) * S + S <= m

    # --- a thread's whole share of a row in registers (vals: a float32 local array of
    # per_thread, element e = group e // S, slot e % S; every index is a constant once the
    # loops unroll, so it lives in registers). Shared addresses in 32-bit arithmetic from
    # one per-row base: the per-group 64-bit index math of fetch() cost ~2.5 instructions
    # per element (nbkernels.rows.sasscount, sm_90a).
    if half:
        if kind == "bf16":
            @dev
            def lo_f32(w):
                return C.bits_to_f32(w << 16)

            @dev
            def hi_f32(w):
                return C.bits_to_f32(w & 0xFFFF0000)

            if sm80:
                @dev
                def pack2(a, b):
                    return C.pack_bf16x2(a, b)
            else:
                @dev
                def pack2(a, b):
                    return uint32(bf16_bits_sw(a) | (bf16_bits_sw(b) << 16))
        else:
            @dev
            def lo_f32(w):
                return C.f16_bits_to_f32(uint16(w & 0xFFFF))

            @dev
            def hi_f32(w):
                return C.f16_bits_to_f32(uint16(w >> 16))

            @dev
            def pack2(a, b):
                return C.pack_f16x2(a, b)

    @dev
    def load_group(sh, base, t, G, j, vals, o):
        """Slot group ``j`` staged at word ``base`` as float32 into ``vals[o:o + S]``."""
        a = gaddr(sh, base, t, G, j)
        for q in range(GW // 4):
            w = M.ld_shared_v4(a + uint32(q * 16))
            for i in range(4):
                if half:
                    vals[o + q * 8 + 2 * i] = lo_f32(w[i])
                    vals[o + q * 8 + 2 * i + 1] = hi_f32(w[i])
                else:
                    vals[o + q * 4 + i] = C.bits_to_f32(w[i])

    @dev
    def load_row(sh, base, t, G, vals):
        """All of this thread's staged elements (padding reads as the zeros cp.async wrote)."""
        for j in range(V):
            load_group(sh, base, t, G, j, vals, j * S)

    H = min(V, 4)  # a loop over at most 4 groups stays unrolled (layer_norm's write_row)
    ROW_WORDS = V * GW  # a thread's share of a row, packed

    @dev
    def gload_words(addr, m, t, G, j, words, o, full_row):
        """Slot group ``j`` of the row at global ``addr`` into ``words[o:o + GW]``: 16-byte
        loads without checks when ``full_row``, else :func:`gload`'s (zeros past ``m``)."""
        tmp = cuda.local.array(GW, uint32)
        if full_row:
            g = group_at(addr, t, G, j)
            for q in range(GW // 4):
                w = M.ld_global_v4(uint64(g + q * 16))
                for i in range(4):
                    tmp[q * 4 + i] = w[i]
        else:
            gload(addr, m, t, G, j, tmp)
        for i in range(GW):
            words[o + i] = tmp[i]

    @dev
    def gload_words_row(addr, m, t, G, words, full_row):
        """This thread's share of the row at global ``addr`` (``m`` valid elements), packed,
        into ``words`` (``row_words`` of them), straight from global memory: the register-row
        layout (perf-notes r43), no staging. Past ``m`` the words read as zeros, as staged
        padding does. The branch on ``full_row`` (thread_full) stands outside the loops, and
        each loop holds at most 4 groups, so LLVM unrolls them and ``words`` stays in
        registers (layer_norm's ``write_row``); no group is converted between two groups'
        loads (a partial thread's groups are separate branches, across which the assembler
        does not move a load)."""
        if full_row:
            for j in range(H):
                gload_words(addr, m, t, G, j, words, j * GW, True)
            for j in range(H, V):
                gload_words(addr, m, t, G, j, words, j * GW, True)
        else:
            for j in range(H):
                gload_words(addr, m, opaque(t), opaque(G), j, words, j * GW, False)
            for j in range(H, V):
                gload_words(addr, m, opaque(t), opaque(G), j, words, j * GW, False)

    @dev
    def unpack_row(words, vals):
        """The packed share ``words`` (:func:`gload_words_row`) as float32 into ``vals``.
        (Unpacking it again in each pass through a volatile move, as the r43 prototypes did,
        took the sm_90a builds from 84-95 registers to 127-128: every group's values were
        unpacked before the first was used; perf-notes r44.)"""
        for j in range(H):
            for i in range(GW):
                unpack_word(words[j * GW + i], vals, j * S, i)
        for j in range(H, V):
            for i in range(GW):
                unpack_word(words[j * GW + i], vals, j * S, i)

    @dev
    def gload_row(addr, m, t, G, vals, full_row):
        """This thread's elements of the row at global ``addr`` (``m`` valid) as float32 in
        ``vals``: :func:`gload_words_row`, then :func:`unpack_row` (the register-row
        kernels' load)."""
        words = cuda.local.array(ROW_WORDS, uint32)
        gload_words_row(addr, m, t, G, words, full_row)
        unpack_row(words, vals)

    @dev
    def unpack_word(w, vals, v, i):
        """Word ``i`` of a slot group as float32 into ``vals[v:]`` (16-bit: two elements)."""
        if half:
            vals[v + 2 * i] = lo_f32(w)
            vals[v + 2 * i + 1] = hi_f32(w)
        else:
            vals[v + i] = C.bits_to_f32(w)

    @dev
    def pack_group(vals, o, words):
        """``vals[o:o + S]`` rounded to the kind into ``words`` (GW words)."""
        for i in range(GW):
            if half:
                words[i] = pack2(vals[o + 2 * i], vals[o + 2 * i + 1])
            else:
                words[i] = C.f32_to_bits(vals[o + i])

    @dev
    def unpack_group(words, vals, o):
        """The inverse of :func:`pack_group`: ``words`` as float32 into ``vals[o:o + S]``."""
        for i in range(GW):
            if half:
                vals[o + 2 * i] = lo_f32(words[i])
                vals[o + 2 * i + 1] = hi_f32(words[i])
            else:
                vals[o + i] = C.bits_to_f32(words[i])

    @dev
    def store_words(addr, m, t, G, j, full_row, words):
        """Slot group ``j`` (``words``) stored into the row at global ``addr`` (its element
        0): 16-byte stores without checks when ``full_row``, else only the part below
        ``m``. Callers branch on ``full_row`` outside their loop over the groups (a branch
        per group kept every group's outputs live until the stores)."""
        if full_row:
            g = group_at(addr, t, G, j)
            for q in range(GW // 4):
                M.st_global_v4(uint64(g + q * 16), (words[q * 4], words[q * 4 + 1],
                                                    words[q * 4 + 2], words[q * 4 + 3]))
        else:
            gstore(addr, m, opaque(t), opaque(G), j, words)  # offsets per row, as issue()

    @dev
    def store_group(addr, m, t, G, j, full_row, vals, o):
        """``vals[o:o + S]`` rounded to the kind and stored as slot group ``j``
        (:func:`store_words`)."""
        words = cuda.local.array(GW, uint32)
        pack_group(vals, o, words)
        store_words(addr, m, t, G, j, full_row, words)

    @dev
    def store_group_from(addr, lo, m, t, G, j, vals, o):
        """:func:`store_group`'s masked path for the elements ``lo`` to ``m`` only."""
        words = cuda.local.array(GW, uint32)
        pack_group(vals, o, words)
        gstore_from(addr, lo, m, opaque(t), opaque(G), j, words)

    @dev
    def count(t, G, m):
        """How many of this thread's elements lie in the ``m`` (a prefix of its order).
        In 32 bits: ``m`` is at most a group's capacity (G * per_thread)."""
        c = int32(0)
        for j in range(V):
            c += min(max(int32(m) - (int32(j) * int32(G) + int32(t)) * int32(S), int32(0)),
                     int32(S))
        return uint32(c)

    def vector_group(staged: bool):
        """``vg(sh, w, m, t, G, j, vals, full_row)``: slot group ``j`` of a vector (a weight,
        a bias) as float32 into ``vals[0:S]``, from the copy staged at word ``w``
        (``staged``: the row loop) or read from global address ``w`` with ``m`` valid
        elements (a split row's chunk, the register-row layout; ``full_row``: this thread's
        groups all lie below ``m``, 16-byte loads without checks)."""
        if staged:
            @dev
            def vg(sh, w, m, t, G, j, vals, full_row):
                load_group(sh, w, t, G, j, vals, 0)
        else:
            @dev
            def vg(sh, w, m, t, G, j, vals, full_row):
                tmp = cuda.local.array(GW, uint32)
                gload_words(w, m, t, G, j, tmp, 0, full_row)
                for k in range(S):
                    vals[k] = get(tmp, k)
        return vg

    return SimpleNamespace(issue=issue, wait=wait, commit=commit, wait_behind=wait_behind,
                           full=full, fetch=fetch, put_back=put_back, gload=gload, gstore=gstore,
                           get=get, put=put, first=first, elem=elem, gw=GW, groups=V, slot=S,
                           words=per_thread * esz // 4, load_group=load_group,
                           load_row=load_row, gload_row=gload_row, store_group=store_group,
                           store_group_from=store_group_from,
                           pack_group=pack_group,
                           unpack_group=unpack_group, store_words=store_words,
                           count=count, thread_full=thread_full, vector_group=vector_group,
                           gload_words_row=gload_words_row, row_words=ROW_WORDS,
                           gload_words=gload_words, unpack_row=unpack_row)


LOG2E = np.float32(1.4426950408889634)


def _ftz(x):
    x = np.float32(x)
    return np.float32(0) * np.sign(x) if 0 < abs(x) < np.float32(2.0**-126) else x


def _ex2_sim(x):
    with np.errstate(over="ignore"):
        return _ftz(np.exp2(_ftz(x)))


def _rcp_sim(x):
    with np.errstate(divide="ignore"):
        return _ftz(np.float32(1) / _ftz(x))


#: 2^x, one MUFU.EX2; ex2.approx.f32 without .ftz assembles to 4 instructions (a scaling
#: of denormal results): results below 2^-126 flush to zero here, which no row op can see
#: (softmax: e^-87 of the row's largest value)
ex2_ftz = define("nbk_rows_ex2_ftz", "ex2.approx.ftz.f32 $d, $x;", outputs=("d:f32",),
                 inputs=("x:f32",), sass=("MUFU.EX2",), simulate=_ex2_sim,
                 doc="2^x, approximate (2 ulp), denormals flushed to zero.")
#: 1/x, one MUFU.RCP; the IEEE division it replaces in silu is ~8 instructions with a branch
rcp_ftz = define("nbk_rows_rcp_ftz", "rcp.approx.ftz.f32 $d, $x;", outputs=("d:f32",),
                 inputs=("x:f32",), sass=("MUFU.RCP",), simulate=_rcp_sim,
                 doc="1/x, approximate (1 ulp), denormals flushed to zero.")


def _rsqrt_sim(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _ftz(np.float32(1) / np.sqrt(_ftz(x)))


#: 1/sqrt(x), one MUFU.RSQ; 1 / sqrt(x) in IEEE float32 is a division (FCHK, a slow-path
#: branch), a sqrt (MUFU.RSQ, a range check and a Newton step) and a reciprocal (MUFU.RCP,
#: a range check and a Newton step): ~30 instructions a row in rms_norm (sasscount). Relative
#: error 2^-22.9; x below 2^-126 reads as 0 (1/sqrt: inf, as for x = 0)
rsqrt_ftz = define("nbk_rows_rsqrt_ftz", "rsqrt.approx.ftz.f32 $d, $x;", outputs=("d:f32",),
                   inputs=("x:f32",), sass=("MUFU.RSQ",), simulate=_rsqrt_sim,
                   doc="1/sqrt(x), approximate (2^-22.9 relative), denormals flushed to zero.")


@dev
def fast_exp(v):
    """exp(v) as 2^(v * log2 e): one MUFU.EX2 (ex2_ftz) where math.exp's libdevice expf is
    ~10 instructions; relative error a few float32 ulps. softmax passes x - max, exact near
    the max, so rows of values near 1e4 keep full accuracy (folding the max into an FMA,
    x * log2e - max * log2e, would lose ~1e-3 there)."""
    return ex2_ftz(v * LOG2E)


@dev
def lanes16_sum(v):
    """Sum over the 16 lanes of a half-warp (four butterfly steps). Every lane ends with the
    same bits: each step adds the same two values, and a + b == b + a."""
    v += shfl_bfly_f32(v, 8)
    v += shfl_bfly_f32(v, 4)
    v += shfl_bfly_f32(v, 2)
    v += shfl_bfly_f32(v, 1)
    return v


@dev
def lanes16_max(v):
    """Maximum over the 16 lanes of a half-warp."""
    v = max(v, shfl_bfly_f32(v, 8))
    v = max(v, shfl_bfly_f32(v, 4))
    v = max(v, shfl_bfly_f32(v, 2))
    v = max(v, shfl_bfly_f32(v, 1))
    return v


@dev
def warp_sum(v):
    """Sum over the warp: the two half-warps met, then :func:`lanes16_sum` (the same bits in
    every lane)."""
    return lanes16_sum(v + shfl_bfly_f32(v, 16))


@dev
def warp_max(v):
    """Maximum over the warp: the two half-warps met, then :func:`lanes16_max`."""
    return lanes16_max(max(v, shfl_bfly_f32(v, 16)))


@dev
def lanes_of(G):
    """log2 of a lanes layout's group of ``G`` lanes (8, 16 or 32): the kernel's row and
    lane of a thread by shifts, not a 64-bit division by a launch argument."""
    return 3 if G == 8 else (4 if G == 16 else 5)


@dev
def lanes_sum(v, G, red, slot):
    """Sum over the caller's group of ``G`` lanes (8, 16 or 32, aligned within the warp: the
    several rows a warp of the lanes layout holds, perf-notes r63); every lane of a group ends
    with the same bits. ``red`` and ``slot`` are unused (:func:`group_sum`'s arguments: the
    row statistics take either). Every lane of the warp runs the same butterfly steps: ``G``
    is the launch's."""
    if G > 16:
        v += shfl_bfly_f32(v, 16)
    if G > 8:
        v += shfl_bfly_f32(v, 8)
    v += shfl_bfly_f32(v, 4)
    v += shfl_bfly_f32(v, 2)
    v += shfl_bfly_f32(v, 1)
    return v


@dev
def lanes_max(v, G, red, slot):
    """Maximum over the caller's group of ``G`` lanes; as :func:`lanes_sum`."""
    if G > 16:
        v = max(v, shfl_bfly_f32(v, 16))
    if G > 8:
        v = max(v, shfl_bfly_f32(v, 8))
    v = max(v, shfl_bfly_f32(v, 4))
    v = max(v, shfl_bfly_f32(v, 2))
    v = max(v, shfl_bfly_f32(v, 1))
    return v


@dev
def group_sum(v, G, red, slot):
    """Sum over the ``G`` threads of the caller's group; every thread gets the same value.
    ``red`` is a (slots, MAX_WARPS) shared array. A group of more than one warp is the whole
    block (RowConfig allows several rows per block only for the warp layout), so its barrier
    is reached by every thread. A slot may be written again only after every thread has
    passed a later barrier: a loop over rows alternates two slots (or uses two reductions a
    row). The warps' partials are summed by 16 lanes at once in four butterfly steps (a loop
    over them cost ~2 instructions per element a row)."""
    v = warp_sum(v)
    if G > 32:
        tb = cuda.threadIdx.x
        if tb % 32 == 0:
            red[slot, tb // 32] = v
        cuda.syncthreads()
        lane = tb % 16  # both half-warps read the partials: every lane ends with the sum
        p = red[slot, lane]
        v = lanes16_sum(p if lane < G // 32 else float32(0))
    return v


@dev
def group_max(v, G, red, slot):
    """Maximum over the caller's group; as :func:`group_sum`."""
    v = warp_max(v)
    if G > 32:
        tb = cuda.threadIdx.x
        if tb % 32 == 0:
            red[slot, tb // 32] = v
        cuda.syncthreads()
        lane = tb % 16
        p = red[slot, lane]
        v = lanes16_max(p if lane < G // 32 else float32(-math.inf))
    return v


#: slots of ``red`` that :func:`exchange` uses a row: three, in two sets that alternate
#: between rows (one barrier a row: a set is written again only after every thread passed
#: the next row's barrier, i.e. after all of them read it)
EXCHANGE_SLOTS = 6


@dev
def exchange(a, b, c, G, red, it, fa, fb, fc, w0, named):
    """One barrier for a group of several warps: the whole block (``named`` False: the
    caller's constant, so the build holds one form), or one of the groups of a shared loop
    (:func:`make_loop`) whose first warp is ``w0``, on named barrier ``1 + w0``
    (:func:`config.shared_groups` keeps it under 16). Each warp's lane 0 posts its
    warp's ``(a, b, c)``; lane ``l`` of every warp of the group returns the group's warp
    ``l % 16``'s triple, or ``(fa, fb, fc)`` where the group has no such warp. Slots
    ``3 * (it & 1)`` and the two after it. The caller combines the triples over the 16 lanes
    (:func:`lanes16_sum`)."""
    tb = cuda.threadIdx.x
    s = 3 * (it & 1)
    if tb % 32 == 0:
        w = tb // 32
        red[s, w] = a
        red[s + 1, w] = b
        red[s + 2, w] = c
    if named:
        bar_sync(uint32(1 + w0), uint32(G))
    else:
        cuda.syncthreads()
    lane = tb % 16
    if lane < G // 32:
        return red[s, w0 + lane], red[s + 1, w0 + lane], red[s + 2, w0 + lane]
    return fa, fb, fc


@dev
def walk(G):
    """Where a group starts when blocks loop over rows (phase 0): (its first row, the step
    to its next row, thread in group, group in block). Block b's groups take rows
    b * groups + g, then every gridDim * groups rows after it."""
    tb = int64(cuda.threadIdx.x)
    grp = tb // G
    per = int64(cuda.blockDim.x) // G
    return int64(cuda.blockIdx.x) * per + grp, int64(cuda.gridDim.x) * per, tb - grp * G, grp


def make_lanes(io, pad):
    """The lanes layout's pieces (RowConfig "lanes": ``G`` of 8, 16 or 32 lanes a row,
    several rows a warp, each loaded straight into registers; perf-notes r63) for rows of
    ``io``'s kind:

    - ``place(G, rows)``: (row, lane in the row, mine) of this thread; a group past the last
      row works on the last row again (every lane of the warp takes part in the shuffles)
      with ``mine`` false: it stores nothing.
    - ``left(m, t, G, j)``: elements of the row from lane ``t``'s slot group ``j`` on (``S``
      or more: the group lies in the row; 0 or less: past it).
    - ``load(addr, m, t, G, xv)``: the lane's groups of the row at ``addr`` (``m`` elements)
      as float32 in ``xv``, every slot past the row ``pad`` (softmax's -inf: out of the max,
      and exp(-inf - max) = 0 in the sum; zero for sums of squares): the statistics take
      the unmasked path whatever the lane holds, so a warp whose rows end in different
      groups of its lanes runs one path, not both. A group past the row loads nothing.
    - ``pad(m, t, G, xv, value)``: the lane's slots past the row set to ``value`` (known at
      run time only: layer_norm's row's first element, then its mean less that).
    - ``loops``: the most groups a loop over a lane's groups holds (two loops, each unrolled).
    """
    gload_words, unpack_row = io.gload_words, io.unpack_row
    S, GW, V, NW = io.slot, io.gw, io.groups, io.words
    HL = min(V, 4)
    PAD, PADDED = np.float32(pad), pad != 0

    @dev
    def place(G, rows):
        tb = int64(cuda.threadIdx.x)
        lg = lanes_of(G)
        grp = tb >> lg
        row = (int64(cuda.blockIdx.x) * int64(cuda.blockDim.x) >> lg) + grp
        mine = row < rows
        return (row if mine else rows - 1), tb - (grp << lg), mine

    @dev
    def left(m, t, G, j):
        return int32(m) - (int32(j) * int32(G) + int32(t)) * int32(S)

    @dev
    def load_group(addr, m, t, G, j, words):
        k = left(m, t, G, j)
        if k >= int32(S):
            gload_words(addr, m, t, G, j, words, j * GW, True)
        elif k > int32(0):  # the row's last group, partly past it
            gload_words(addr, m, t, G, j, words, j * GW, False)
        else:  # past the row: no loads (every lane of a group of 8 but the first past a
            for i in range(GW):  # row of 200, perf-notes r63)
                words[j * GW + i] = uint32(0)

    @dev
    def pad_group(m, t, G, j, xv, value):
        k = left(m, t, G, j)
        if k < int32(S):
            for e in range(S):
                if int32(e) >= k:
                    xv[j * S + e] = value

    @dev
    def pad(m, t, G, xv, value):
        for j in range(HL):
            pad_group(m, t, G, j, xv, value)
        for j in range(HL, V):
            pad_group(m, t, G, j, xv, value)

    @dev
    def load(addr, m, t, G, xv):
        words = cuda.local.array(NW, uint32)
        for j in range(HL):
            load_group(addr, m, t, G, j, words)
        for j in range(HL, V):
            load_group(addr, m, t, G, j, words)
        unpack_row(words, xv)
        if PADDED:  # zeros are what the loads leave past the row
            pad(m, t, G, xv, PAD)

    return SimpleNamespace(place=place, left=left, load=load, pad=pad, loops=HL)


def make_loop(io, prologue, stage, work, max_buffers=4, shared=False):
    """``loop(sm, G, items, nbuf, words, vwords, ctx)``: the groups of ``G`` threads walk work
    items (rows, or chunks) ``i, i + step, ...`` (:func:`walk`), each group with a ring of
    ``nbuf`` (1, 2 or 4) staging buffers of ``words`` words per thread and ``vwords`` more
    (weight, bias) after them. ``prologue(sm, vbase, t, G, ctx)`` stages the vectors once;
    ``stage(sm, buf, item, t, G, ctx)`` issues an item's copies into buffer word ``buf`` and
    returns a float32 the item needs first (layer_norm's pivot; loaded with the copies, so its
    latency hides too); ``work(sm, buf, vbase, item, it, pivot, t, G, ctx)`` works on a staged
    item (``it``: the group's item count, for alternating reduction slots). The ``nbuf - 1``
    items after the current one are in flight while it is worked on; with one buffer an item
    is staged, then waited for. Each item's copies are one cp.async group (an empty one past
    the last item), so "all but the newest nbuf - 1 groups" is exactly the current item; a
    buffer is refilled by the thread that read it an iteration before (each thread reads back
    only what it staged), so the ring needs no barrier. ``max_buffers`` (2 or 4, fixed at
    compile time) is the deepest ring the kernel is built for: layer_norm's float32 kernel
    spilled with the pivots of a 4-deep ring live (perf-notes r7); the host never plans
    deeper (``kernel.nbk_max_buffers``).

    ``shared`` (compile time): the block's groups share one copy of the vectors (perf-notes
    r35), after every group's buffers. Group 0 stages it with its first item; one block
    barrier before any group's first work (after each thread's wait for its first item)
    makes it every group's. A group with no item goes once through the loop's top to pass
    that barrier (the same instruction: a second ``syncthreads`` on another path is a
    different barrier instruction, which ``bar.sync``'s aligned form does not allow and
    compute-sanitizer's synccheck reports as divergent threads), then leaves.
    After it the groups walk their items apart: a group of several warps meets on its own
    named barrier (:func:`exchange`)."""
    commit, wait_behind = io.commit, io.wait_behind
    AHEAD = max_buffers - 1  # items staged after the current one, at most

    @dev
    def loop(sm, G, items, nbuf, words, vwords, ctx):
        item, step, t, grp = walk(G)
        if shared:
            if item - grp >= items:  # group 0 has no item: nor has any group of the block
                return
            base = grp * G * nbuf * words
            vbase = (int64(cuda.blockDim.x) // G) * G * nbuf * words
            if grp == 0:
                prologue(sm, vbase, t, G, ctx)  # committed with the first item's copies
        else:
            if item >= items:  # a group of several warps is the whole block: all return
                return
            base = grp * G * (nbuf * words + vwords)
            vbase = base + nbuf * G * words
            prologue(sm, vbase, t, G, ctx)  # committed with the first item's copies
        ahead = nbuf - 1
        # pivots of the current item (q0) and of the items staged after it (q1, q2)
        q0, q1, q2 = float32(0), float32(0), float32(0)
        for k in range(AHEAD):
            if k < ahead:
                v = float32(0)
                if item + k * step < items:
                    v = stage(sm, base + k * G * words, item + k * step, t, G, ctx)
                commit()
                if k == 0:
                    q0 = v
                elif k == 1:
                    q1 = v
                else:
                    q2 = v
        it = int64(0)
        while item < items or (shared and it == 0):
            target = item + ahead * step
            after = float32(0)
            if target < items:
                after = stage(sm, base + ((it + ahead) & (nbuf - 1)) * G * words, target, t,
                              G, ctx)
            wait_behind(ahead)  # this item's copies have landed; the next ones stay in flight
            if ahead == 0:
                q0 = after
            if shared and it == 0:  # group 0's vectors landed (its wait above): everyone's
                cuda.syncthreads()
                if item >= items:  # a group with no item: it came for the barrier
                    return
            work(sm, base + (it & (nbuf - 1)) * G * words, vbase, item, it, q0, t, G, ctx)
            if ahead == 1:
                q0 = after
            elif AHEAD >= 2 and ahead == 2:
                q0, q1 = q1, after
            elif AHEAD >= 3 and ahead == 3:
                q0, q1, q2 = q1, q2, after
            item += step
            it += 1

    return loop


@dev
def locate(phase, G, chunks, n, P):
    """(row, chunk, thread in group, chunk's first element, elements in the chunk) for
    threads of ``P`` elements each (the kernel's constant). Phase 0: a block holds
    blockDim / G whole rows. Phases 1 and 2 (long rows): block b is chunk b % chunks of row
    b // chunks."""
    tb = cuda.threadIdx.x
    if phase == 0:
        row, c = int64(cuda.blockIdx.x) * (cuda.blockDim.x // G) + tb // G, int64(0)
    else:
        b = int64(cuda.blockIdx.x)
        row, c = b // chunks, b % chunks
    c0 = c * G * P
    return row, c, tb % G, c0, min(n - c0, G * P)


NEG_INF = np.float32(-np.inf)
