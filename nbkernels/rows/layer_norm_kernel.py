"""LayerNorm: ``y = (x - mean) / sqrt(var + eps) * weight + bias`` over the last axis
(biased variance, as torch). Not E[x^2] - E[x]^2 over the row: each thread sums its at most
64 elements and their squares around its own first element, whose cancellation is bounded
(perf-notes r29), and the threads' and warps' parts combine exactly (Chan et al.): one pass
over the registers, one butterfly and one barrier a row. Short rows in the lanes layout take
two passes over the registers instead: the sum of x - x0 (x0 the row's first element), then
of the squared deviations from the mean (perf-notes r65)."""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, int32, int64, types, uint32

from ..intrinsics import memory as M
from ..intrinsics.warp import shfl_bfly_f32
from .. import repeat
from . import host
from .config import for_arch, regs_config
from .device import (ELEMENT_BYTES, EXCHANGE_SLOTS, MAX_THREADS, MAX_WARPS, PER_THREAD, dev,
                     exchange, group_sum, lanes16_sum, lanes_sum, locate, make_io, make_lanes,
                     make_loop, opaque, rcp_ftz, rsqrt_ftz, staging_base)

NEG_ZERO = np.float32(-0.0)  # x + -0 is x for every x, -0 included
NSTAT = 2  # per chunk: mean and sum of squared deviations (combined exactly, Chan et al.)


def layer_norm_ref(x, weight=None, bias=None, eps=1e-5):
    x64 = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = x64.mean(axis=-1, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x64 - mean) / np.sqrt(var + eps)
        if weight is not None:
            y = y * np.asarray(weight, np.float64)
        if bias is not None:
            y = y + np.asarray(bias, np.float64)
    return y


#: bytes of a row a thread stages per buffer: 32 float32 or 64 16-bit elements. bf16 rows of
#: 8192 at 32 a thread (256-thread blocks) moved 69.5% of copy on the H200, at 64 (128 threads)
#: 81.2%; rows of 4096 85.2 -> 88.0% (session 10, run 5; perf-notes r13)
ROW_BYTES = 128


def per_thread(kind: str, sm80: bool = True) -> int:
    """Elements of a row a thread holds in the ``kind`` kernel (its ``nbk_per_thread``).
    Turing's kernels keep 32: its bf16 rounding in integer code made the 16-bit write loop
    too long for LLVM to unroll, and the register array went to the stack (sm_75 build)."""
    return ROW_BYTES // ELEMENT_BYTES[kind] if sm80 else PER_THREAD


@functools.lru_cache(maxsize=None)
def build(kind: str, wkind: str, bkind: str, sm80: bool, has_w: bool, has_b: bool,
          per_thread_: int | None = None):
    """The kernels for ``kind`` rows with these vectors; ``per_thread_`` elements a thread
    (default :func:`per_thread`; 32 for 16-bit rows: the register-row layout's rows that fill
    whole warps of 32-element threads, config.regs_config; fewer for rows on a warp or a
    64-thread block that need fewer slot groups a thread, config.narrow_per_thread)."""
    P = per_thread_ or per_thread(kind, sm80)
    io = make_io(kind, sm80, per_thread=P)
    wio = make_io(wkind, sm80, kind, per_thread=P)
    bio = make_io(bkind, sm80, kind, per_thread=P)
    issue, wait, first, load_row, store_group, count = (io.issue, io.wait, io.first,
                                                        io.load_row, io.store_group, io.count)
    gload_words_row, unpack_group, ROW_WORDS, GW = (io.gload_words_row, io.unpack_group,
                                                    io.row_words, io.gw)
    thread_full, get = io.thread_full, io.get
    esz, wsz, bsz = ELEMENT_BYTES[kind], ELEMENT_BYTES[wkind], ELEMENT_BYTES[bkind]
    V, S, NW = io.groups, io.slot, io.words
    # the write loop as two loops, the first H groups and the rest (write_row); 2 on Turing,
    # whose bf16 rounding in integer code makes each group's body longer
    H = min(V, 4 if sm80 else 2)
    WNW = wio.words if has_w else 0  # words of weight and bias a thread stages (phase 0)
    BNW = bio.words if has_b else 0
    wissue, bissue = wio.issue, bio.issue
    zero = float32(0)
    WARP_ELEMS = float32(32 * P)  # elements of a warp's part of a whole row (or chunk)
    # exact where 32 * P is a power of two; for the narrow builds (24, 40, 48 or 56 elements a
    # thread, perf-notes r54-r55) rounded once: a relative 2^-24 in a warp's mean, which the
    # warps' combination then carries into M2 (a block of 64 threads; the warp layout does not
    # use it)
    RWARP = float32(1 / (32 * P))
    # a ring of 2 at most: with a 4-deep ring's pivots live the float32 kernel spilled
    # (120-136 B on sm_80-sm_90a; `nbkernels compile`, session 5), and 4 measured no faster
    MAX_BUFFERS = 2
    # float32 vectors beside 16-bit rows: one copy a block, shared by its row groups (perf-notes
    # r35). Per group they took 64 KB at rows of 8192 and left 2 groups an SM of the 4 the
    # registers allow: 51% of copy at 8192^2, against 86% in 16 bits. Not where one vector is
    # 16-bit: that build spilled 12-16 B in the row loop (sm_90), and its 48 KB a group
    # leave 3 groups an SM, not 2
    SHARED = sm80 and kind != "f32" and (has_w or has_b) and \
        (not has_w or wkind == "f32") and (not has_b or bkind == "f32")

    # the lane butterfly's steps for whole rows: the two halves met at step i hold
    # n_i = P * 2^i elements each; 1 / n_i (exact where P is a power of two, else rounded
    # once: both partners round the same product) and n_i / 2 their pair's weight (Chan)
    RN = tuple(float32(1 / (P << i)) for i in range(5))
    KN = tuple(float32(P << i) * float32(0.5) for i in range(5))

    @dev
    def meet_even(D, M2, Db, Mb, rn, k):
        """Two halves of equal count n meet (Chan et al.): sums ``D`` of x - x0 add, and M2
        gains (mean_b - mean_a)^2 * n / 2, with ``rn`` = 1 / n and ``k`` = n / 2. The
        partner lane computes the same bits (a - b is -(b - a) exactly; its square and both
        sums commute), so every lane of the warp ends with one result."""
        d = (Db - D) * rn
        return D + Db, (M2 + Mb) + d * d * k

    @dev
    def meet(D, M2, n, Db, Mb, nb):
        """Two halves of any counts meet (Chan et al.), as :func:`meet_even`; a half with no
        elements adds nothing. Symmetric in its halves up to one rounding: the compiler may
        fuse a product of the means' difference into an FMA on either side, so partner lanes
        can differ in M2's last bit (partial rows only; where a group spans warps, each
        warp's lane 0 posts the one value all lanes then use)."""
        nn = n + nb
        if n > zero and nb > zero:
            d = Db * rcp_ftz(nb) - D * rcp_ftz(n)
            M2 = (M2 + Mb) + d * d * (n * nb * rcp_ftz(nn))
        else:
            M2 = M2 + Mb
        return D + Db, M2, nn

    @dev
    def meet_lanes(D, M2, nw):
        """The warp's lanes' (sum of x - x0, M2, count) met (:func:`meet`) in five butterfly
        steps."""
        D, M2, nw = meet(D, M2, nw, shfl_bfly_f32(D, 16), shfl_bfly_f32(M2, 16),
                         shfl_bfly_f32(nw, 16))
        D, M2, nw = meet(D, M2, nw, shfl_bfly_f32(D, 8), shfl_bfly_f32(M2, 8),
                         shfl_bfly_f32(nw, 8))
        D, M2, nw = meet(D, M2, nw, shfl_bfly_f32(D, 4), shfl_bfly_f32(M2, 4),
                         shfl_bfly_f32(nw, 4))
        D, M2, nw = meet(D, M2, nw, shfl_bfly_f32(D, 2), shfl_bfly_f32(M2, 2),
                         shfl_bfly_f32(nw, 2))
        return meet(D, M2, nw, shfl_bfly_f32(D, 1), shfl_bfly_f32(M2, 1), shfl_bfly_f32(nw, 1))

    @dev
    def moments(x0, t, G, m, rm, full, red, it, xv, named):
        """(mean, sum of squared deviations, delta) of the row or chunk in ``xv`` over the
        group in one pass over the registers and one butterfly (perf-notes r29). Each thread
        centres its elements on its own first one (xt) and sums x - xt and its square; its
        squared deviations are q - s^2 / c, whose cancellation is bounded: q <= c * M2
        (Samuelson: no element lies further from the mean than sqrt((c-1) M2 / c)), c at
        most 64. The threads' and then the warps' (sum of x - x0, M2, count) combine exactly
        (Chan et al.), the warps at one barrier where the group spans several. ``xv``
        (registers) leaves holding x - xt, and delta = mean - xt. ``rm``: 1 / m; ``full``:
        thread_full(t, G, m); ``it``: the group's row count, which alternates the exchange's
        slots. Sums are of x - x0 (x0: the row's first element), so a row of equal values
        gets its mean exactly, x - mean is exactly 0 and the output exactly the bias. Only a
        thread whose elements run past ``m`` masks them (a compare and a select each).
        ``named``: the group meets on its own named barrier (groups sharing the vectors)."""
        c = uint32(P)  # elements below m: counted by a partial thread only
        if not full:
            c = count(t, G, m)
        xt = xv[0] if c > 0 else x0
        s0, s1, q0, q1 = zero, zero, zero, zero  # two chains each: an FADD waits on the last
        if full:
            for e in range(0, P, 2):
                xv[e] -= xt
                xv[e + 1] -= xt
                s0 += xv[e]
                s1 += xv[e + 1]
                q0 += xv[e] * xv[e]
                q1 += xv[e + 1] * xv[e + 1]
        else:
            for e in range(0, P, 2):
                xv[e] = xv[e] - xt if e < c else zero
                xv[e + 1] = xv[e + 1] - xt if e + 1 < c else zero
                s0 += xv[e]
                s1 += xv[e + 1]
                q0 += xv[e] * xv[e]
                q1 += xv[e + 1] * xv[e + 1]
        return combine(x0, xt, s0 + s1, q0 + q1, c, full, t, G, m, rm, red, it, named)

    @dev
    def combine(x0, xt, s, q, c, full, t, G, m, rm, red, it, named):
        """:func:`moments` from a thread's sums ``s`` of x - xt and ``q`` of its squares over
        its ``c`` elements (``full``: c is P): the thread's squared deviations, then the
        lanes' and warps' exact combination."""
        nt = float32(c)
        if full:
            M2 = q - s * s * RN[0]
        else:
            M2 = q - s * s * rcp_ftz(nt) if c > 0 else zero
        if M2 < zero:  # rounding below 0 (not max(): a NaN must stay NaN)
            M2 = zero
        D = s + nt * (xt - x0)  # the thread's sum of x - x0
        whole = m == G * P  # every thread holds P elements: the counts are powers of two
        if whole:
            Db, Mb = shfl_bfly_f32(D, 16), shfl_bfly_f32(M2, 16)
            D, M2 = meet_even(D, M2, Db, Mb, RN[0], KN[0])
            Db, Mb = shfl_bfly_f32(D, 8), shfl_bfly_f32(M2, 8)
            D, M2 = meet_even(D, M2, Db, Mb, RN[1], KN[1])
            Db, Mb = shfl_bfly_f32(D, 4), shfl_bfly_f32(M2, 4)
            D, M2 = meet_even(D, M2, Db, Mb, RN[2], KN[2])
            Db, Mb = shfl_bfly_f32(D, 2), shfl_bfly_f32(M2, 2)
            D, M2 = meet_even(D, M2, Db, Mb, RN[3], KN[3])
            Db, Mb = shfl_bfly_f32(D, 1), shfl_bfly_f32(M2, 1)
            D, M2 = meet_even(D, M2, Db, Mb, RN[4], KN[4])
            nw = WARP_ELEMS
        else:
            D, M2, nw = meet_lanes(D, M2, nt)
        if G > 32:
            # the group's first warp and its own barrier where groups share the vectors
            w0 = (cuda.threadIdx.x - t) // 32 if named else 0
            sl, ql, nl = exchange(D, M2, nw, G, red, it, zero, zero, zero, w0, named)
            dmean = lanes16_sum(sl) * rm  # the group's mean of x - x0
            ml = sl * RWARP  # lane l's warp's mean, as that warp computed it
            if not whole:
                ml = sl * rcp_ftz(nl) if nl > zero else zero
            dl = ml - dmean
            mean = x0 + dmean
            return mean, lanes16_sum(ql + nl * dl * dl), mean - xt
        mean = x0 + D * rm  # one warp: its sums are the group's
        return mean, M2, mean - xt

    def make_write(staged: bool):
        wgroup, bgroup = wio.vector_group(staged), bio.vector_group(staged)

        @dev
        def out_group(sm, xv, o, w, b, t, G, m, j, rstd, cst, full, yrow):
            """Group ``j`` of y = (x - mean) * rstd * w + b from ``xv`` (x - pivot) as
            (xv * rstd + cst) * w + b, cst = -(mean - pivot) * rstd (an FFMA where a multiply
            by rstd was: -0 where the pivot is the mean, which adds nothing), stored;
            w and b staged at words ``w`` / ``b`` (the row loop) or read from global
            addresses ``w`` / ``b`` (a split row's chunk, the register rows); the group's
            values at ``xv[o:o + S]``."""
            wv = cuda.local.array(S, float32)
            bv = cuda.local.array(S, float32)
            if has_w:
                wgroup(sm, w, m, t, G, j, wv, full)
            if has_b:
                bgroup(sm, b, m, t, G, j, bv, full)
            for k in range(S):
                y = xv[o + k] * rstd + cst
                if has_w:
                    y *= wv[k]
                if has_b:
                    y += bv[k]
                xv[o + k] = y
            store_group(yrow, m, t, G, j, full, xv, o)

        @dev
        def write_row(sm, xv, w, b, t, G, m, rstd, cst, full, yrow):
            """Two loops over the slot groups, not one: LLVM unrolled loops of 4 groups (2 on
            Turing), so every index into ``xv`` became a constant and the array lived in
            registers; a loop of 8 it left rolled, and the whole array went to the stack
            (a 16-bit row of 64 elements a thread, perf-notes r13; on Turing one of 4)."""
            if full:
                for j in range(H):
                    out_group(sm, xv, j * S, w, b, t, G, m, j, rstd, cst, True, yrow)
                for j in range(H, V):
                    out_group(sm, xv, j * S, w, b, t, G, m, j, rstd, cst, True, yrow)
            else:
                for j in range(H):
                    out_group(sm, xv, j * S, w, b, t, G, m, j, rstd, cst, False, yrow)
                for j in range(H, V):
                    out_group(sm, xv, j * S, w, b, t, G, m, j, rstd, cst, False, yrow)

        @dev
        def packed_group(words, z, j, xt, w, b, t, G, m, rstd, cst, full, yrow):
            """:func:`out_group` of group ``j`` of a packed row (the register rows), its
            words unpacked here, x - xt formed again: the same operations as the float32
            row's, so the same bits. ``z`` is 0, a value the assembler cannot know: the words
            xor'ed with it are not the ones :func:`moments_packed` unpacked, so the assembler
            cannot keep that pass's float32 values for this one."""
            g = cuda.local.array(GW, uint32)
            vals = cuda.local.array(S, float32)
            for i in range(GW):
                g[i] = words[j * GW + i] ^ z
            unpack_group(g, vals, 0)
            for k in range(S):
                vals[k] -= xt
            out_group(uint32(0), vals, 0, w, b, t, G, m, j, rstd, cst, full, yrow)

        @dev
        def write_packed(words, z, xt, w, b, t, G, m, rstd, cst, full, yrow):
            """:func:`write_row` of a packed row, a group unpacked at a time."""
            if full:
                for j in range(H):
                    packed_group(words, z, j, xt, w, b, t, G, m, rstd, cst, True, yrow)
                for j in range(H, V):
                    packed_group(words, z, j, xt, w, b, t, G, m, rstd, cst, True, yrow)
            else:
                for j in range(H):
                    packed_group(words, z, j, xt, w, b, t, G, m, rstd, cst, False, yrow)
                for j in range(H, V):
                    packed_group(words, z, j, xt, w, b, t, G, m, rstd, cst, False, yrow)
        return write_row, write_packed, out_group

    write_staged = make_write(True)[0]  # the row loop's (its vectors staged)
    # split rows' chunks; the register rows; the lanes layout's groups
    write_global, write_packed, out_global = make_write(False)

    @dev
    def packed_sums(words, j, xt, c, full, acc):
        """Group ``j`` of a packed row (its words unpacked here) into ``acc``'s two chains
        of sums of x - xt and of their squares (:func:`moments`'s loop; past ``c`` masked)."""
        g = cuda.local.array(GW, uint32)
        vals = cuda.local.array(S, float32)
        for i in range(GW):
            g[i] = words[j * GW + i]
        unpack_group(g, vals, 0)
        for k in range(0, S, 2):
            a = vals[k] - xt
            b = vals[k + 1] - xt
            if not full:
                a = a if j * S + k < c else zero
                b = b if j * S + k + 1 < c else zero
            acc[0] += a
            acc[1] += b
            acc[2] += a * a
            acc[3] += b * b

    @dev
    def moments_packed(x0, t, G, m, rm, full, red, words):
        """:func:`moments` of a packed row (the register rows): each group unpacked where it
        is summed, and again where it is written (:func:`make_write`'s ``write_packed``), so
        the row stays 16-bit in registers (perf-notes r48). Returns (mean, M2, delta, xt)."""
        c = uint32(P)
        if not full:
            c = count(t, G, m)
        xt = get(words, 0) if c > 0 else x0
        acc = cuda.local.array(4, float32)
        for i in range(4):
            acc[i] = zero
        if full:
            for j in range(H):
                packed_sums(words, j, xt, c, True, acc)
            for j in range(H, V):
                packed_sums(words, j, xt, c, True, acc)
        else:
            for j in range(H):
                packed_sums(words, j, xt, c, False, acc)
            for j in range(H, V):
                packed_sums(words, j, xt, c, False, acc)
        mean, m2, delta = combine(x0, xt, acc[0] + acc[1], acc[2] + acc[3], c, full, t, G, m,
                                  rm, red, 0, False)
        return mean, m2, delta, xt

    @dev
    def prologue(sm, ws, t, G, c):
        xa, ya, wa, ba, sx, sy, n, eps, red = c
        if has_w:
            wissue(sm, ws, wa, n, t, G)
        if has_b:
            bissue(sm, ws + G * WNW, ba, n, t, G)

    @dev
    def stage(sm, xs, row, t, G, c):
        xa, ya, wa, ba, sx, sy, n, eps, red = c
        issue(sm, xs, xa + row * sx * esz, n, t, G)
        return first(xa + row * sx * esz)  # the pivot, loaded while the row is in flight

    @dev
    def work(sm, xs, ws, row, it, x0, t, G, c):
        xa, ya, wa, ba, sx, sy, n, eps, red = c
        rn, full = float32(1) / float32(n), thread_full(t, G, n)  # loop-invariant: hoisted
        n = opaque(n)  # the partial groups' masks: computed in their branch, per row
        xv = cuda.local.array(P, float32)
        load_row(sm, xs, t, G, xv)
        mean, m2, delta = moments(x0, t, G, n, rn, full, red, it, xv, SHARED)
        rstd = rsqrt_ftz(m2 * rn + eps)
        write_staged(sm, xv, ws, ws + G * WNW, t, G, n, rstd, -(delta * rstd), full,
                     ya + row * sy * esz)

    loop = make_loop(io, prologue, stage, work, MAX_BUFFERS, shared=SHARED)

    @cuda.jit
    def layer_norm_kernel(X, W, B, Y, n, rows, sx, sy, eps, phase, G, chunks, nbuf, WS):
        red = cuda.shared.array((EXCHANGE_SLOTS, MAX_WARPS), float32)
        sm = staging_base(cuda.shared.array(0, uint32))
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        wa, ba = int64(M.gmem_addr(W, 0)), int64(M.gmem_addr(B, 0))
        if phase == 0:  # whole rows, blocks looping over them; weight and bias staged once
            loop(sm, G, rows, nbuf, NW, WNW + BNW, (xa, ya, wa, ba, sx, sy, n, eps, red))
            return
        # split rows: block b is chunk b % chunks of row b // chunks
        row, c, t, c0, m = locate(phase, G, chunks, n, P)
        if row >= rows:
            return
        xv = cuda.local.array(P, float32)
        cap = G * P
        xrow = xa + row * sx * esz
        issue(sm, 0, xrow + c0 * esz, m, t, G)
        wait()
        if phase == 1:
            load_row(sm, 0, t, G, xv)
            mean, m2, _ = moments(first(xrow), t, G, m, float32(1) / float32(m),
                                  thread_full(t, G, m), red, 0, xv, SHARED)
            if t == 0:
                WS[2 * (row * chunks + c)] = mean
                WS[2 * (row * chunks + c) + 1] = m2
            return
        # chunk i holds cnt_i elements with mean_i and M2_i; the row's mean is the
        # count-weighted mean and M2 = sum(M2_i + cnt_i * (mean_i - mean)^2)
        s = zero
        for i in range(t, chunks, G):
            s += WS[2 * (row * chunks + i)] * float32(min(n - i * cap, cap))
        mean = group_sum(s, G, red, 2) / float32(n)
        d = zero
        for i in range(t, chunks, G):
            dm = WS[2 * (row * chunks + i)] - mean
            d += WS[2 * (row * chunks + i) + 1] + float32(min(n - i * cap, cap)) * dm * dm
        m2 = group_sum(d, G, red, 3)
        rstd = rsqrt_ftz(m2 * (float32(1) / float32(n)) + eps)
        load_row(sm, 0, t, G, xv)
        for e in range(P):
            xv[e] -= mean
        write_global(sm, xv, wa + c0 * wsz, ba + c0 * bsz, t, G, m, rstd, NEG_ZERO,
                     thread_full(t, G, m), ya + (row * sy + c0) * esz)

    @cuda.jit
    def layer_norm_regs(X, W, B, Y, n, rows, sx, sy, eps, phase, G, chunks, nbuf, WS):
        """The register-row layout (RowConfig "regs"): block b of ``G`` threads normalizes row
        b, loaded straight from global memory into registers, weight and bias read per group
        from global memory (L1); no staging (perf-notes r43). The arguments are the main
        kernel's; ``phase``, ``chunks``, ``nbuf`` and ``WS`` are unused."""
        red = cuda.shared.array((EXCHANGE_SLOTS, MAX_WARPS), float32)
        row = int64(cuda.blockIdx.x)
        if row >= rows:
            return
        t = int64(cuda.threadIdx.x)
        xrow = int64(M.gmem_addr(X, 0)) + row * sx * esz
        ya = int64(M.gmem_addr(Y, 0))
        wa, ba = int64(M.gmem_addr(W, 0)), int64(M.gmem_addr(B, 0))
        full = thread_full(t, G, n)
        words = cuda.local.array(ROW_WORDS, uint32)
        gload_words_row(xrow, n, t, G, words, full)
        rn = float32(1) / float32(n)
        mean, m2, delta, xt = moments_packed(first(xrow), t, G, n, rn, full, red, words)
        rstd = rsqrt_ftz(m2 * rn + eps)
        z = uint32(opaque(n) >> 40)  # 0 (rows are shorter than 2^40), unknown to ptxas
        write_packed(words, z, xt, wa, ba, t, G, n, rstd, -(delta * rstd), full,
                     ya + row * sy * esz)

    layer_norm_regs.nbk_launch_bounds = (MAX_THREADS, 1)

    lanes = make_lanes(io, 0.0)
    lanes_place, lanes_load, lanes_left, lanes_pad, HL = (lanes.place, lanes.load, lanes.left,
                                                          lanes.pad, lanes.loops)


    @dev
    def lanes_moments(x0, t, G, m, rm, xv):
        """(mean, M2, delta = mean - x0) of a row on ``G`` lanes (8, 16 or 32; the lanes
        layout) in two passes over the registers and two butterflies of adds (perf-notes
        r65): the lanes' sum of x - x0 (slots past the row set to x0: 0 there), then their
        sum of squared deviations from that mean (slots past the row set to it: 0 there).
        No counts, no reciprocals and no divergent steps, where :func:`meet` took three of
        each a step. ``x0`` is the row's first element: a row of equal values has delta
        exactly 0, so x - mean is exactly 0. ``xv`` leaves holding x - x0 in the row's slots
        (delta past it)."""
        lanes_pad(m, t, G, xv, x0)
        s0, s1 = zero, zero
        for e in range(0, P, 2):
            xv[e] -= x0
            xv[e + 1] -= x0
            s0 += xv[e]
            s1 += xv[e + 1]
        delta = lanes_sum(s0 + s1, G, 0, 0) * rm
        lanes_pad(m, t, G, xv, delta)
        q0, q1 = zero, zero
        for e in range(0, P, 2):
            d0 = xv[e] - delta
            d1 = xv[e + 1] - delta
            q0 += d0 * d0
            q1 += d1 * d1
        return x0 + delta, lanes_sum(q0 + q1, G, 0, 0), delta

    @dev
    def lanes_out_group(xv, wa, ba, t, G, m, j, rstd, cst, yrow):
        """Group ``j`` of y where it lies in the row: 16-byte loads and stores where whole,
        element by element where it ends the row, nothing past it. Worked on in a copy of
        the group's values: written back into ``xv`` in some branches and not others, each
        slot of it became a phi of predicated moves (119 registers at 32 elements a lane,
        64 with the copy; perf-notes r65)."""
        k = lanes_left(m, t, G, j)
        if k > int32(0):
            g = cuda.local.array(S, float32)
            for e in range(S):
                g[e] = xv[j * S + e]
            out_global(uint32(0), g, 0, wa, ba, t, G, m, j, rstd, cst, k >= int32(S), yrow)

    @cuda.jit
    def layer_norm_lanes(X, W, B, Y, n, rows, sx, sy, eps, phase, G, chunks, nbuf, WS):
        """The lanes layout (RowConfig "lanes", device.make_lanes): short rows, ``G`` (8, 16
        or 32) lanes a row and several rows a warp, loaded straight into registers, weight
        and bias read per group from global memory (L1); perf-notes r64. The arguments are
        the main kernel's; ``phase``, ``chunks``, ``nbuf`` and ``WS`` are unused."""
        row, t, mine = lanes_place(G, rows)
        xrow = int64(M.gmem_addr(X, 0)) + row * sx * esz
        ya = int64(M.gmem_addr(Y, 0))
        wa, ba = int64(M.gmem_addr(W, 0)), int64(M.gmem_addr(B, 0))
        xv = cuda.local.array(P, float32)
        lanes_load(xrow, n, t, G, xv)
        rn = float32(1) / float32(n)
        mean, m2, delta = lanes_moments(first(xrow), t, G, n, rn, xv)
        rstd = rsqrt_ftz(m2 * rn + eps)
        if mine:
            for j in range(HL):
                lanes_out_group(xv, wa, ba, t, G, n, j, rstd, -(delta * rstd),
                                ya + row * sy * esz)
            for j in range(HL, V):
                lanes_out_group(xv, wa, ba, t, G, n, j, rstd, -(delta * rstd),
                                ya + row * sy * esz)

    layer_norm_lanes.nbk_launch_bounds = (MAX_THREADS, 1)

    # .minnctapersm 1: without it ptxas squeezed some variants to 64 registers with spills
    # (layer_norm f32 on sm_90a 16 B, swiglu f32 on sm_80 12 B); how many blocks share
    # an SM is chosen per launch from the real count (host.Call.loop_launch)
    layer_norm_kernel.nbk_launch_bounds = (MAX_THREADS, 1)
    # 16-bit rows on sm_80+ also run in registers, a block a row (host.wants_regs)
    layer_norm_kernel.nbk_regs = layer_norm_regs if sm80 and kind != "f32" else None
    layer_norm_kernel.nbk_lanes = layer_norm_lanes if P <= PER_THREAD else None
    layer_norm_kernel.nbk_max_buffers = MAX_BUFFERS
    layer_norm_kernel.nbk_vec_shared = SHARED  # the vectors staged once a block (make_loop)
    # the groups' own barriers (bar_sync, ids 1 + the group's first warp, computed at run
    # time): ptxas reserves all 16, and an SM holds 64 (config.SmLimits.barriers): 4 blocks
    layer_norm_kernel.nbk_barriers = 16 if SHARED else 1
    # blocks of several rows where the plan takes pairs (above 30 GB/s of DRAM an SM: the
    # H200), whatever resident blocks they cost, by block size: (rows a block, buffers)
    # (perf-notes r22, r24, r25; two or three samples each, % of copy against the plan before):
    # * float32 rows of 2049-4096 (128 threads), two rows, two buffers: 95.0-96.1 at 32768x4096
    #   against the loop's 90.2-90.4, though the second buffer leaves 3 blocks an SM of 4;
    # * float32 rows of 4097-8192 (256 threads), four rows, one buffer: 90.3-90.6 at 8192^2
    #   against the loop's 88.4, 93.2-93.3 at 16384x8192 against 90.6-90.8;
    # * 16-bit rows of 2049-8192 (64 and 128 threads), two rows, one buffer (a block per row's
    #   residency, the staged weight and bias read once for both rows): 90.6-91.8 at
    #   32768x4096 against 86.0, 84.0-86.0 at 8192^2 against 79.3-79.7.
    # * float32 rows of 7168 (224 threads, session 48 runs A-B): the rule's two rows of two
    #   buffers keep 2 blocks an SM there, 95.2-95.5 against four rows' 91.7-92.0; rows of 5120
    #   (160 threads, where two buffers leave 2 blocks of 3) four rows' 92.9-93.2. So four rows
    #   of one buffer only where the rule's pairs cost resident blocks (``_else_``: 4097-8192).
    layer_norm_kernel.nbk_pairs_by_threads = {128: (2, 2)} if kind == "f32" else \
        {64: (2, 1), 128: (2, 1)} if sm80 else {}
    layer_norm_kernel.nbk_pairs_else_by_threads = {256: (4, 1)} if kind == "f32" else {}
    layer_norm_kernel.nbk_per_thread = P
    layer_norm_kernel.nbk_row_bytes = NW * 4  # staged per thread per buffer
    layer_norm_kernel.nbk_vec_bytes = (WNW + BNW) * 4  # weight and bias, staged once (phase 0)
    return layer_norm_kernel


SIG = (host.BYTES,) * 4 + (types.int64,) * 4 + (types.float32,) + (types.int64,) * 4 + \
    (host.F32_BUF,)
_KEY = host.key_function("layer_norm", ("x", "weight", "bias", "out"), ("eps",))


def layer_norm(x, weight=None, bias=None, eps=1e-5, *, out=None, stream=None, config=None):
    """LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    ``x``: float16, bfloat16 or float32, any leading shape; ``weight`` and ``bias`` (either
    may be None): length ``x.shape[-1]``, x's dtype or float32. Statistics in float32: each
    thread's squared deviations around its own first element (at most 64 elements, so the
    cancellation is bounded), combined exactly across threads and warps (Chan et al.); not
    E[x^2] - E[x]^2; short rows (the lanes layout) in two passes, the sum of x - x0 (x0 the
    row's first element), then of the squared deviations. ``out`` may be ``x``. ``config``
    (a :class:`RowConfig`) or env ``NBKERNELS_ROW_VARIANT`` forces a layout.
    """
    args = (x, weight, bias, out)
    key, ptrs = _KEY(args, (type(eps), config))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            res = rep.fire(args, ptrs, (float(eps),), stream)
            if res is not repeat.DECLINED:
                return res
    named, ptrs = host.by_name(_KEY, args, ptrs)
    return _layer_norm(x, weight, bias, eps, out=out, stream=stream, config=config,
                       named=named, key=key, ptrs=ptrs)


@repeat.stream_ordered(0, "x")
def _layer_norm(x, weight, bias, eps, *, out, stream=None, config, named, key, ptrs):
    """A call the repeat path did not take (with ``stream=``, run with that stream current):
    check, plan, launch, and record the launches for repeat calls under ``key``."""
    if host.needs_device_copy(x, weight, bias, out):
        return host.via_device(
            lambda x, weight, bias: layer_norm(x, weight, bias, eps, config=config),
            {"x": x, "weight": weight, "bias": bias}, {"out": out}, "layer_norm")
    call = host.Call("layer_norm", stream)
    X = call.rows(x, "x")
    W = call.vector(weight, "weight", X) if weight is not None else None
    B = call.vector(bias, "bias", X) if bias is not None else None
    Y = call.output(out, "out", X)
    hw = for_arch(call.arch()).sm80
    wk = W.kind if W else "f32"
    bk = B.kind if B else "f32"
    P = per_thread(X.kind, hw)
    lanes = host.wants_lanes(call, X, config)
    if lanes:  # several short rows a warp (perf-notes r64, r65)
        config = config if config is not None else host.lanes_config(X)
        P = config.per_thread if config is not None else PER_THREAD
    elif host.wants_regs(call, X, config, hw and X.kind != "f32") and config is None:
        config = regs_config(X.n, (PER_THREAD, P))  # rows filling whole warps if they can
        P = config.per_thread
    else:  # narrow rows: the slot groups a thread they need (perf-notes r54-r56)
        P = host.narrow_per_thread(X, config, P)
    kern = build(X.kind, wk, bk, hw, W is not None, B is not None, P)
    cfg = call.config(X, config, kern)
    xb, wb, bb, yb = call.buf(X), call.buf(W), call.buf(B), call.buf(Y)

    def args(phase, nbuf, ws):
        return [xb, wb, bb, yb, np.int64(X.n), np.int64(X.rows), np.int64(X.stride),
                np.int64(Y.stride), np.float32(eps), np.int64(phase), np.int64(cfg.threads),
                np.int64(cfg.chunks), np.int64(nbuf), ws]

    tags = ("x", "weight" if W else None, "bias" if B else None, "out", None, None, None, None,
            "eps", None, None, None, None)
    host.run_phases(call, kern, SIG, cfg, X.rows, NSTAT, args, tags,
                    ("layer_norm", X.kind, wk, bk, hw, W is not None, B is not None, P))
    host.remember(key, call, ("out",), named, ptrs, scalars=_KEY.scalars)
    return call.finish(Y)
