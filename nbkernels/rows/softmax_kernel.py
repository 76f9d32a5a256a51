"""Softmax: ``exp(x - max) / sum(exp(x - max))`` along one axis, numerically stable for any
row length: rows longer than a block holds combine per-chunk (max, sum) pairs online,
``S = sum_i s_i * exp(m_i - M)``. NaN and infinities give what NumPy's formula gives."""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, int32, int64, types, uint32

from ..errors import NbkernelsError
from ..intrinsics import memory as M
from .. import repeat
from . import host
from .config import REGS_PER_THREAD, for_arch, regs_config
from .device import (ELEMENT_BYTES, MAX_THREADS, MAX_WARPS, NEG_INF, PER_THREAD, dev, fast_exp,
                     group_max, group_sum, lanes_max, lanes_sum, locate, make_io, make_lanes,
                     make_loop, opaque, rcp_ftz, staging_base)

NSTAT = 2  # per chunk: max and sum of exp(x - max)


def softmax_ref(x, axis=-1):
    x64 = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


@functools.lru_cache(maxsize=None)
def build(kind: str, sm80: bool, per_thread: int = PER_THREAD, shifted: bool = False):
    """The kernels for ``kind`` rows; ``per_thread`` (32, or 64 for 16-bit rows on sm_80+:
    the register-row layout's build, host.wants_regs; fewer for rows on a warp or a 64-thread
    block that need fewer slot groups a thread, config.narrow_per_thread) elements a thread.

    ``shifted``: rows that need not start 16-byte aligned (16-bit rows of a width that is no
    multiple of 8, float32 ones of no multiple of 4: host.Call.rows with ``shift``), read and
    written in place instead of through padded copies (perf-notes r59). A row whose start
    lies ``h`` elements past a 16-byte boundary is worked on as the ``n + h`` elements from
    that boundary, its first ``h`` (the row before's last ones, or bytes before the array in
    its allocation) read but masked and never written; ``y``'s rows must lie as many
    elements past a boundary as ``x``'s (the host checks it). Its layout is planned for
    ``n + S - 1`` elements."""
    if per_thread > PER_THREAD and (kind == "f32" or not sm80):
        raise ValueError(f"softmax build: {per_thread} elements a thread needs 16-bit rows on "
                         f"sm_80+, got {kind}, sm80={sm80}")
    io = make_io(kind, sm80, per_thread=per_thread)
    issue, wait, load_row, store_group, count = (io.issue, io.wait, io.load_row,
                                                 io.store_group, io.count)
    thread_full = io.thread_full
    gload_row, store_from = io.gload_row, io.store_group_from
    P, esz, V, S, NW = per_thread, ELEMENT_BYTES[kind], io.groups, io.slot, io.words
    # the 64-element build writes in two loops of at most 4 groups (layer_norm's write_row:
    # a loop of 8 LLVM left rolled, and the row's registers went to the stack)
    H = min(V, 4) if P > PER_THREAD else V
    zero = float32(0)
    LOG2_ESZ = esz.bit_length() - 1

    @dev
    def head(addr):
        """Elements of the row at ``addr`` before it, from its 16-byte boundary (0, a
        constant, in a build for aligned rows)."""
        if shifted:
            return (addr & 15) >> LOG2_ESZ
        return int64(0)

    @dev
    def head_slots(h, t, first_chunk):
        """Slots of this thread's share before the row starts: group 0 of thread 0 of a
        row's first chunk holds the ``h`` elements of the head."""
        return uint32(h) if t == 0 and first_chunk else uint32(0)

    @dev
    def drop_head(xv, cl):
        """The head's ``cl`` slots as -inf: out of the max, and exp(-inf - max) = 0 in the
        sum (a row whose max is -inf is NaN throughout, as NumPy's). The head's thread then
        takes the full path (masked there as a partial thread's slots are, it made every
        row's first warp run both paths: perf-notes r59)."""
        if shifted:
            for e in range(S):
                if e < cl:
                    xv[e] = NEG_INF

    def stats_with(gmax, gsum):
        """``row_stats`` reducing over a group with ``gmax`` and ``gsum`` (device.group_max
        and group_sum: a warp or a block; lanes_max and lanes_sum: 8-32 lanes a row)."""

        @dev
        def row_stats(t, G, m, full, red, slot, xv):
            """(max, sum of exp(x - max)) of the row or chunk in ``xv``, over the group;
            ``xv`` (registers) leaves holding exp(x - max), zero past ``m``; ``full``:
            thread_full(t, G, m). Only a thread whose elements run past ``m`` masks them
            (per-element masks everywhere cost a third of the bf16 throughput:
            instruction-bound)."""
            c = uint32(P)  # elements below m: counted by a partial thread only
            if not full:
                c = count(t, G, m)
            mx = NEG_INF
            if full:
                for e in range(P):
                    mx = max(mx, xv[e])
            else:
                for e in range(P):
                    mx = max(mx, xv[e] if e < c else NEG_INF)
            mx = gmax(mx, G, red, slot)
            s0, s1 = zero, zero  # two chains: each FADD waits on the one before it
            if full:
                for e in range(0, P, 2):
                    xv[e] = fast_exp(xv[e] - mx)
                    xv[e + 1] = fast_exp(xv[e + 1] - mx)
                    s0 += xv[e]
                    s1 += xv[e + 1]
            else:  # padding (zero-filled, not stored) may overflow: selected away, not summed.
                for e in range(0, P, 2):  # exp, then a select: a predicated exp kept its input
                    e0 = fast_exp(xv[e] - mx)  # and output live at once (+16 registers)
                    e1 = fast_exp(xv[e + 1] - mx)
                    xv[e] = e0 if e < c else zero
                    xv[e + 1] = e1 if e + 1 < c else zero
                    s0 += xv[e]
                    s1 += xv[e + 1]
            return mx, gsum(s0 + s1, G, red, slot + 1)

        return row_stats

    row_stats = stats_with(group_max, group_sum)
    lanes_stats = stats_with(lanes_max, lanes_sum)

    @dev
    def store_part(yrow, cl, m, t, G, j, xv):
        """Group ``j`` of a partial thread: the elements below ``m`` and, in a shifted
        build, none of the head's ``cl``."""
        if shifted:
            store_from(yrow, cl, m, t, G, j, xv, j * S)
        else:
            store_group(yrow, m, t, G, j, False, xv, j * S)

    @dev
    def write_row(xv, t, G, m, scale, full, yrow, cl):
        """y = xv * scale, stored; not the head's ``cl`` slots (thread 0's group 0 of a
        shifted row's first chunk: the row before's last elements)."""
        if full:
            for j in range(H):
                scale_group(xv, j, scale)
                if shifted and j == 0 and cl > 0:  # a full thread's group: all below m
                    store_from(yrow, cl, S, t, G, 0, xv, 0)
                else:
                    store_group(yrow, m, t, G, j, True, xv, j * S)
            for j in range(H, V):
                scale_group(xv, j, scale)
                store_group(yrow, m, t, G, j, True, xv, j * S)
        else:
            for j in range(H):
                scale_group(xv, j, scale)
                store_part(yrow, cl, m, t, G, j, xv)
            for j in range(H, V):
                scale_group(xv, j, scale)
                store_part(yrow, cl, m, t, G, j, xv)

    @dev
    def scale_group(xv, j, scale):
        for k in range(S):
            xv[j * S + k] *= scale

    @dev
    def prologue(sm, vb, t, G, c):
        pass

    @dev
    def stage(sm, xs, row, t, G, c):
        xa, ya, sx, sy, n, red = c
        xrow = xa + row * sx * esz
        h = head(xrow)
        issue(sm, xs, xrow - h * esz, n + h, t, G)
        return zero

    @dev
    def work(sm, xs, vb, row, it, pivot, t, G, c):
        xa, ya, sx, sy, n, red = c
        h = head(xa + row * sx * esz)  # 0 unless shifted
        cl = head_slots(h, t, True)
        m = n + h
        full = thread_full(t, G, n)  # loop-invariant, hoisted: full at n, full at n + h
        m = opaque(m)  # the partial groups' masks: computed in their branch, per row
        xv = cuda.local.array(P, float32)
        load_row(sm, xs, t, G, xv)
        drop_head(xv, cl)
        mx, s = row_stats(t, G, m, full, red, 0, xv)  # two reductions a row: slots 0
        write_row(xv, t, G, m, rcp_ftz(s), full, ya + (row * sy - h) * esz, cl)  # and 1

    loop = make_loop(io, prologue, stage, work)

    @dev
    def split_phase(sm, red, xa, ya, n, rows, sx, sy, phase, G, chunks, WS):
        """Phases 1 and 2 of a split row (:func:`host.run_phases`)."""
        # block b is chunk b % chunks of row b // chunks
        row, c, t, c0, m = locate(phase, G, chunks, n, P)
        if row >= rows:
            return
        h = head(xa + row * sx * esz)  # 0 unless shifted
        if shifted:  # chunks of the n + h elements from the row's boundary (planned for
            m = min(n + h - c0, G * P)  # n + S - 1: a row's last chunk may be empty)
            if m <= 0:
                if phase == 1 and t == 0:
                    WS[2 * (row * chunks + c)] = NEG_INF
                    WS[2 * (row * chunks + c) + 1] = zero
                return
        cl = head_slots(h, t, c == 0)
        xv = cuda.local.array(P, float32)
        issue(sm, 0, xa + (row * sx + c0 - h) * esz, m, t, G)
        wait()
        if phase == 1:
            load_row(sm, 0, t, G, xv)
            drop_head(xv, cl)
            cmx, cs = row_stats(t, G, m, thread_full(t, G, m), red, 0, xv)
            if t == 0:
                WS[2 * (row * chunks + c)] = cmx
                WS[2 * (row * chunks + c) + 1] = cs
            return
        mx = NEG_INF
        for i in range(t, chunks, G):
            mx = max(mx, WS[2 * (row * chunks + i)])
        mx = group_max(mx, G, red, 2)
        s = zero
        for i in range(t, chunks, G):
            mi = WS[2 * (row * chunks + i)]
            # a chunk of -inf only contributes 0 (its own sum is NaN: -inf - -inf)
            s += WS[2 * (row * chunks + i) + 1] * fast_exp(mi - mx) if mi != NEG_INF else zero
        s = group_sum(s, G, red, 3)
        load_row(sm, 0, t, G, xv)
        drop_head(xv, cl)
        cnt = count(t, G, m)
        for e in range(P):  # padding (zero-filled) is not stored; it must not overflow
            xv[e] = fast_exp(xv[e] - mx) if e < cnt else zero
        write_row(xv, t, G, m, rcp_ftz(s), cnt == P, ya + (row * sy + c0 - h) * esz, cl)


    @cuda.jit
    def softmax_kernel(X, Y, n, rows, sx, sy, phase, G, chunks, nbuf, WS):
        red = cuda.shared.array((4, MAX_WARPS), float32)
        sm = staging_base(cuda.shared.array(0, uint32))
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        # whole rows, blocks looping over them (phase 0; split rows: softmax_split)
        loop(sm, G, rows, nbuf, NW, 0, (xa, ya, sx, sy, n, red))

    @cuda.jit
    def softmax_split(X, Y, n, rows, sx, sy, phase, G, chunks, nbuf, WS):
        """Split rows (phases 1 and 2): a kernel of their own, with the registers they need
        (sm_90a: 60-64 where the main kernel's loop holds 76-79, 95 in a shifted build: 4
        blocks of 256 threads an SM instead of 3 or 2; perf-notes r59). The arguments are
        the main kernel's; ``nbuf`` is unused."""
        red = cuda.shared.array((4, MAX_WARPS), float32)
        sm = staging_base(cuda.shared.array(0, uint32))
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        split_phase(sm, red, xa, ya, n, rows, sx, sy, phase, G, chunks, WS)

    softmax_split.nbk_launch_bounds = (MAX_THREADS, 1)

    @dev
    def chunk_len(ne, c, G):
        """Elements of chunk ``c`` (of ``G * P``) in a row of ``ne``; 0 or less past it."""
        return min(ne - c * G * P, G * P)

    @dev
    def chunk_values(sm, c, t, G, m, cl, xv):
        """Chunk ``c`` of the staged row into ``xv``, the head's slots (chunk 0) -inf; the
        slots this thread holds below ``m``."""
        load_row(sm, c * G * NW, t, G, xv)
        if c == 0:
            drop_head(xv, cl)
        return count(t, G, m)

    @cuda.jit
    def softmax_whole(X, Y, n, rows, sx, sy, phase, G, chunks, nbuf, WS):
        """Rows of the split layout that shared memory holds whole (RowConfig "split" with
        ``whole``: host.run_phases): a block a row stages all its ``chunks`` chunks at once,
        then reads them back from shared memory twice (the max and the sum in one online
        pass, then the output): x is read from global memory once (the split phases read it
        twice; perf-notes r62).
        The arguments are the main kernel's; ``phase``, ``nbuf`` and ``WS`` are unused."""
        red = cuda.shared.array((4, MAX_WARPS), float32)
        sm = staging_base(cuda.shared.array(0, uint32))
        row = int64(cuda.blockIdx.x)
        if row >= rows:
            return
        t = int64(cuda.threadIdx.x)
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        h = head(xa + row * sx * esz)  # 0 unless shifted
        ne, cl = n + h, head_slots(h, t, True)
        xrow, yrow = xa + (row * sx - h) * esz, ya + (row * sy - h) * esz
        for c in range(chunks):  # every chunk's copies in flight at once
            m = chunk_len(ne, c, G)
            if m > 0:
                issue(sm, c * G * NW, xrow + c * G * P * esz, m, t, G)
        wait()
        xv = cuda.local.array(P, float32)
        # one pass for the max and the sum: this thread's running max and its sum of
        # exp(x - that max), rescaled when a chunk raises it (a pass for the max alone cost
        # 16-bit rows a third more instructions: instruction-bound, perf-notes r62)
        tm, ts = NEG_INF, zero
        for c in range(chunks):
            m = chunk_len(ne, c, G)
            if m > 0:
                cnt = chunk_values(sm, c, t, G, m, cl, xv)
                cm = NEG_INF
                if cnt == P:
                    for e in range(P):
                        cm = max(cm, xv[e])
                else:
                    for e in range(P):
                        cm = max(cm, xv[e] if e < cnt else NEG_INF)
                nm = max(tm, cm)
                if nm != NEG_INF:  # all -inf so far: nothing to add (-inf - -inf is NaN)
                    s0 = ts * fast_exp(tm - nm) if tm != NEG_INF else zero
                    s1 = zero
                    if cnt == P:
                        for e in range(0, P, 2):
                            s0 += fast_exp(xv[e] - nm)
                            s1 += fast_exp(xv[e + 1] - nm)
                    else:
                        for e in range(0, P, 2):  # padding may overflow: selected away
                            e0, e1 = fast_exp(xv[e] - nm), fast_exp(xv[e + 1] - nm)
                            s0 += e0 if e < cnt else zero
                            s1 += e1 if e + 1 < cnt else zero
                    ts = s0 + s1
                tm = nm
        mx = group_max(tm, G, red, 0)
        scale = rcp_ftz(group_sum(ts * fast_exp(tm - mx) if tm != NEG_INF else zero, G, red,
                                  1))
        for c in range(chunks):
            m = chunk_len(ne, c, G)
            if m > 0:
                cnt = chunk_values(sm, c, t, G, m, cl, xv)
                if cnt == P:
                    for e in range(P):
                        xv[e] = fast_exp(xv[e] - mx)
                else:
                    for e in range(P):
                        xv[e] = fast_exp(xv[e] - mx) if e < cnt else zero
                write_row(xv, t, G, m, scale, cnt == P, yrow + c * G * P * esz,
                          cl if c == 0 else uint32(0))

    softmax_whole.nbk_launch_bounds = (MAX_THREADS, 1)

    @cuda.jit
    def softmax_regs(X, Y, n, rows, sx, sy, phase, G, chunks, nbuf, WS):
        """The register-row layout (RowConfig "regs"): block b of ``G`` threads computes row
        b, loaded straight from global memory into registers; no staging (perf-notes r43).
        The arguments are the main kernel's; ``phase``, ``chunks``, ``nbuf`` and ``WS`` are
        unused."""
        red = cuda.shared.array((4, MAX_WARPS), float32)
        row = int64(cuda.blockIdx.x)
        if row >= rows:
            return
        t = int64(cuda.threadIdx.x)
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        h = head(xa + row * sx * esz)  # 0 unless shifted
        cl = head_slots(h, t, True)
        m = n + h
        full = thread_full(t, G, m)
        xv = cuda.local.array(P, float32)
        gload_row(xa + (row * sx - h) * esz, m, t, G, xv, full)
        drop_head(xv, cl)
        mx, s = row_stats(t, G, m, full, red, 0, xv)
        write_row(xv, t, G, m, rcp_ftz(s), full, ya + (row * sy - h) * esz, cl)

    softmax_regs.nbk_launch_bounds = (MAX_THREADS, 1)

    lanes = make_lanes(io, NEG_INF)  # slots past a row -inf
    HL, group_left, lanes_place, lanes_load = lanes.loops, lanes.left, lanes.place, lanes.load

    @dev
    def lanes_store_group(yrow, cl, m, t, G, j, scale, xv):
        """Group ``j`` of ``xv`` times ``scale``, stored where it lies in the row: 16 bytes
        where it lies whole (and holds none of a shifted row's head), element by element
        where it ends the row or holds the head, nothing past the row."""
        left = group_left(m, t, G, j)
        if left > int32(0):
            scale_group(xv, j, scale)
            if left >= int32(S) and not (shifted and j == 0 and cl > 0):
                store_group(yrow, m, t, G, j, True, xv, j * S)
            else:
                store_part(yrow, cl, m, t, G, j, xv)

    @cuda.jit
    def softmax_lanes(X, Y, n, rows, sx, sy, phase, G, chunks, nbuf, WS):
        """The lanes layout (RowConfig "lanes"): short rows, ``G`` (8, 16 or 32) lanes a
        row and several rows a warp, each loaded straight from global memory into
        registers; block b holds rows ``b * blockDim / G`` on. A warp of one short row ran
        ~400 instructions a row whatever its length (perf-notes r60, r63): the shuffles,
        the address arithmetic and the row's bookkeeping are shared by its rows here.
        A group past the last row works on the last row again (every lane of the warp
        takes part in the shuffles) and stores nothing. The arguments are the main
        kernel's; ``phase``, ``chunks``, ``nbuf`` and ``WS`` are unused."""
        row, t, mine = lanes_place(G, rows)
        xa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(Y, 0))
        h = head(xa + row * sx * esz)  # 0 unless shifted
        cl = head_slots(h, t, True)
        m = n + h
        xv = cuda.local.array(P, float32)
        lanes_load(xa + (row * sx - h) * esz, m, t, G, xv)
        drop_head(xv, cl)
        # every slot past the row is -inf: the full path (no per-element masks) for all;
        # ``WS`` stands in for the reduction scratch the lanes' shuffles do not use
        mx, s = lanes_stats(t, G, m, True, WS, 0, xv)
        if mine:
            scale, yrow = rcp_ftz(s), ya + (row * sy - h) * esz
            for j in range(HL):
                lanes_store_group(yrow, cl, m, t, G, j, scale, xv)
            for j in range(HL, V):
                lanes_store_group(yrow, cl, m, t, G, j, scale, xv)

    softmax_lanes.nbk_launch_bounds = (MAX_THREADS, 1)

    # .minnctapersm 1: without it ptxas squeezed some variants to 64 registers with spills
    # (layer_norm f32 on sm_90a 16 B, swiglu f32 on sm_80 12 B); how many blocks share
    # an SM is chosen per launch from the real count (host.Call.loop_launch)
    softmax_kernel.nbk_launch_bounds = (MAX_THREADS, 1)
    # 16-bit rows on sm_80+ also run in registers, a block a row (host.wants_regs; the
    # 64-element build by default)
    softmax_kernel.nbk_regs = softmax_regs if sm80 and kind != "f32" else None
    softmax_kernel.nbk_split = softmax_split
    softmax_kernel.nbk_lanes = softmax_lanes
    softmax_kernel.nbk_whole = softmax_whole
    softmax_kernel.nbk_per_thread = P
    softmax_kernel.nbk_row_bytes = NW * 4  # staged per thread per buffer
    softmax_kernel.nbk_vec_bytes = 0
    # H200, session 8 run 6 (perf-notes r11), % of copy with one staging buffer against the
    # ring of two, 8192^2 / 32768x4096: bf16 79.9 / 87.5 against 77.6 / 81.0; f32 89.6 at
    # rows of 8192 (256 threads) against 84.0, and a block per row 92.8 at rows of 4096 (128
    # threads) against 88.0. f16 follows bf16 (same layout; not measured). Other block sizes
    # keep the ring of two (not measured).
    # float32 rows of 4097-8192 (129-256 threads) a block per row too (session 48, runs B-C,
    # perf-notes r47): 94.4 / 96.3 at 8192^2 / 16384x8192 against the pairs' 92.3 / 94.7 that
    # "1" led to on the H200, 97.0 / 97.8 against 94.5 / 95.7 at rows of 5120 / 7168 (160 /
    # 224 threads); rows of 5000 (a partial thread) 91.9 against 93.4
    softmax_kernel.nbk_loop_by_threads = ({128: "0", 256: "0"} if kind == "f32" else
                                          {128: "1", 256: "1"})
    return softmax_kernel


SIG = (host.BYTES,) * 2 + (types.int64,) * 8 + (host.F32_BUF,)
_KEY = host.key_function("softmax", ("x", "out"))


def softmax(x, axis=-1, *, out=None, stream=None, config=None):
    """Softmax along ``axis`` (any axis; the last is fastest, others go through a copy).

    ``x``: float16, bfloat16 or float32; computed in float32; ``out`` may be ``x``.
    ``config`` (a :class:`RowConfig`) or env ``NBKERNELS_ROW_VARIANT`` forces a layout.
    """
    ndim = len(getattr(x, "shape", ()))
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or \
            not -max(ndim, 1) <= axis < max(ndim, 1):
        raise NbkernelsError(f"softmax: axis must be an integer in [-{ndim}, {ndim}), got "
                             f"{axis!r}")
    axis = int(axis) % max(ndim, 1)
    if ndim and axis != ndim - 1:
        return _other_axis(x, axis, out, stream, config)
    args = (x, out)
    key, ptrs = _KEY(args, (config,))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            res = rep.fire(args, ptrs, (), stream)
            if res is not repeat.DECLINED:
                return res
    named, ptrs = host.by_name(_KEY, args, ptrs)
    return _softmax(x, out=out, stream=stream, config=config, named=named, key=key, ptrs=ptrs)


@repeat.stream_ordered(0, "x")
def _softmax(x, *, out, stream=None, config, named, key, ptrs):
    """A call the repeat path did not take (as ``layer_norm_kernel._layer_norm``)."""
    if host.needs_device_copy(x, out):
        return host.via_device(lambda x: softmax(x, config=config), {"x": x}, {"out": out}, "softmax")
    call = host.Call("softmax", stream)
    X = call.rows(x, "x", shift=host.may_shift(config))  # misaligned rows in place (r59)
    Y = call.output(out, "out", X)
    X = call.unshift(X, Y)
    R = X.planned()  # what the layout must hold: a shifted row from its 16-byte boundary
    hw = for_arch(call.arch()).sm80
    can = hw and X.kind != "f32"
    lanes = host.wants_lanes(call, R, config)
    if lanes and config is None:  # several short rows a warp (perf-notes r63)
        config = host.lanes_config(R)
    regs = not lanes and host.wants_regs(call, R, config, can)
    P = REGS_PER_THREAD if regs and can else PER_THREAD
    if lanes:
        P = config.per_thread if config is not None else PER_THREAD
    elif regs and config is None:
        config = regs_config(R.n, (PER_THREAD, REGS_PER_THREAD))
        P = config.per_thread
    elif not regs:  # narrow rows: the slot groups a thread they need (perf-notes r54-r56)
        P = host.narrow_per_thread(R, config, P)
    kern = build(X.kind, hw, P, X.shifted)
    cfg = call.config(R, config, kern)
    xb, yb = call.buf(X), call.buf(Y)

    def args(phase, nbuf, ws):
        return [xb, yb, np.int64(X.n), np.int64(X.rows), np.int64(X.stride), np.int64(Y.stride),
                np.int64(phase), np.int64(cfg.threads), np.int64(cfg.chunks), np.int64(nbuf), ws]

    host.run_phases(call, kern, SIG, cfg, X.rows, NSTAT, args,
                    ("x", "out") + (None,) * 8, ("softmax", X.kind, hw, P, X.shifted))
    host.remember(key, call, ("out",), named, ptrs)
    return call.finish(Y)


def _moveaxis(a, axis):
    if type(a).__module__.startswith("torch"):
        return a.movedim(axis, -1)
    if type(a).__module__.startswith("cupy"):
        import cupy

        return cupy.moveaxis(a, axis, -1)
    if isinstance(a, np.ndarray):
        return np.moveaxis(a, axis, -1)
    raise NbkernelsError(f"softmax: axis other than the last needs a NumPy, CuPy or torch "
                         f"array, got {type(a).__name__}")


def _other_axis(x, axis, out, stream, config):
    """Softmax along a non-last axis: the moved-axis view is strided, so the row path copies
    it once; ``out``'s moved view receives the result."""
    if out is not None and tuple(getattr(out, "shape", ())) != tuple(x.shape):
        raise NbkernelsError(f"softmax: out.shape must be {tuple(x.shape)}, got "
                             f"{tuple(getattr(out, 'shape', ()))}")
    res = softmax(_moveaxis(x, axis), out=None if out is None else _moveaxis(out, axis),
                  stream=stream, config=config)
    if out is not None:
        return out
    if type(res).__module__.startswith("torch"):
        return res.movedim(-1, axis)
    mod = np if isinstance(res, np.ndarray) else __import__("cupy")
    return mod.moveaxis(res, -1, axis)
