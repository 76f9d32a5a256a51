"""RMSNorm: ``y = x / sqrt(mean(x**2) + eps) * weight`` over the last axis, optionally on
``h = x + residual`` (stored too: the updated residual stream of a pre-norm transformer)."""
from __future__ import annotations

import functools
import os
from collections import namedtuple

import numpy as np
from numba import cuda, float32, int32, int64, types, uint32

from ..errors import NbkernelsError
from ..intrinsics import memory as M
from .. import repeat
from . import host
from .config import for_arch, regs_config, wide_dram
from .device import (ELEMENT_BYTES, MAX_THREADS, MAX_WARPS, PER_THREAD, dev, group_sum,
                     lanes_sum, locate, make_io, make_lanes, make_loop, opaque, rsqrt_ftz,
                     staging_base)

NormWithResidual = namedtuple("NormWithResidual", ["out", "residual"])
NSTAT = 1  # partial sum of squares per chunk


def rms_norm_ref(x, weight, eps=1e-6, residual=None):
    """float64 reference on NumPy arrays; with ``residual``, ``(y, h)`` where ``h`` is
    ``x + residual`` rounded to x's dtype (what the kernel stores and normalizes)."""
    x64 = np.asarray(x, np.float64)
    h = None
    if residual is not None:
        h = (x64 + np.asarray(residual, np.float64)).astype(np.asarray(x).dtype)
        x64 = h.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        ms = np.mean(x64 * x64, axis=-1, keepdims=True)
        y = x64 / np.sqrt(ms + eps) * np.asarray(weight, np.float64)
    return (y, h) if residual is not None else y


#: 16-bit rms_norm without a residual has a second build on sm_80+, 64 elements a thread
#: (128 bytes, as float32's 32 and layer_norm's 16-bit kernels): on the H200 rows of 4097-8192
#: on it, a block of 128 threads per row, moved 90.6-91.0% of copy at 8192^2 against 88.7 for
#: the 32-element build's pairs of 256 threads (perf-notes r27); at rows of 4096 the 32-element
#: build stays ahead (its one-buffer pairs, 94.1-94.2). The H100 keeps 32 (the wide build a
#: block per row there: 0.5-1.1 points behind, r27 run E); other lengths are unmeasured with it.
WIDE_PER_THREAD = 64
WIDE_ROWS = (4097, 8192)  # row lengths that take the wide build, where DRAM is wide (wide())
#: the row lengths rms_norm (no residual) takes the register rows at by itself (host.wants_regs):
#: not rows of 8192, where the 64-element build's block a row, every thread full, measured
#: 1.4-2.7 points above the 64-element register rows (H200, perf-notes r45) and 0.2-0.6 above
#: the 32-element ones (session 49, run C); not rows of 4096 and under (-0.15 to -0.36, run C)
REGS_RMS_ROWS = (WIDE_ROWS[0], WIDE_ROWS[1] - 1)
#: slot groups a lane of the lanes layout holds at most where fewer than 32 lanes hold the
#: row (config.lanes_config; softmax's 4): on the H200 (perf-notes r63, run F) 16-bit rows of
#: 200 on 16 lanes of 2 groups moved 89.3% of copy (90.6 with a residual) against 85.7 (84.0)
#: on 8 of 4; float32 rows of 200 on 32 lanes of 2 94.9 against 94.6 on 16 of 4; rows of 64 on
#: 8 lanes either way
LANES_GROUPS = 2


def has_wide(kind: str, sm80: bool, resid: bool) -> bool:
    """Whether rms_norm of ``kind`` rows has the 64-element build."""
    return sm80 and kind != "f32" and not resid


@functools.lru_cache(maxsize=None)
def build(kind: str, wkind: str, sm80: bool, resid: bool, per_thread: int = PER_THREAD):
    if per_thread > PER_THREAD and not (per_thread == WIDE_PER_THREAD and
                                         has_wide(kind, sm80, resid)):
        raise ValueError(f"rms_norm build: {per_thread} elements a thread needs 16-bit rows "
                         f"without a residual on sm_80+, got {kind}, residual={resid}, "
                         f"sm80={sm80}")
    P = per_thread
    io = make_io(kind, sm80, per_thread=P)
    wio = make_io(wkind, sm80, kind, per_thread=P)
    issue, wait, load_row, store_group, thread_full = (io.issue, io.wait, io.load_row,
                                                       io.store_group, io.thread_full)
    gload_row = io.gload_row
    pack_group, unpack_group, store_words = io.pack_group, io.unpack_group, io.store_words
    esz, wsz, V, S, GW, NW = (ELEMENT_BYTES[kind], ELEMENT_BYTES[wkind], io.groups, io.slot,
                              io.gw, io.words)
    H = min(V, 4) if P > PER_THREAD else V  # two loops of at most 4 groups (layer_norm)
    NB = 2 if resid else 1  # staged arrays per row: x (and the residual)
    ROW = NB * NW  # words a thread stages per buffer
    WNW = wio.words  # words of weight a thread stages once (phase 0)
    wissue = wio.issue
    zero = float32(0)

    @dev
    def keep_h(hrow, m, t, G, j, full, xv):
        """Group ``j`` of h rounded to x's dtype: stored, and what is normalized."""
        words = cuda.local.array(GW, uint32)
        pack_group(xv, j * S, words)
        store_words(hrow, m, t, G, j, full, words)
        unpack_group(words, xv, j * S)

    @dev
    def sum_squares(sm, xs, hrow, m, full, t, G, xv):
        """This thread's part of the sum of squares of a staged row or chunk (``full``: all
        its elements lie below ``m``, thread_full); ``xv`` (registers) leaves holding the
        values. With a residual, h = x + residual (rounded to x's dtype) is formed, stored
        at ``hrow`` and normalized."""
        load_row(sm, xs, t, G, xv)
        if resid:
            rv = cuda.local.array(P, float32)
            load_row(sm, xs + G * NW, t, G, rv)
            for e in range(P):
                xv[e] += rv[e]
            if full:
                for j in range(V):
                    keep_h(hrow, m, t, G, j, True, xv)
            else:
                for j in range(V):
                    keep_h(hrow, m, t, G, j, False, xv)
        return squares(xv)

    @dev
    def squares(xv):
        """This thread's sum of squares of ``xv``."""
        s0, s1 = zero, zero  # two chains: each FFMA waits on the one before it
        for e in range(0, P, 2):  # padding is zero (cp.async zero-fill, gload): no mask
            s0 += xv[e] * xv[e]
            s1 += xv[e + 1] * xv[e + 1]
        return s0 + s1

    def make_scale(staged: bool):
        wgroup = wio.vector_group(staged)

        @dev
        def out_group(sm, xv, w, yrow, m, inv, t, G, j, full):
            wv = cuda.local.array(S, float32)
            wgroup(sm, w, m, t, G, j, wv, full)
            for k in range(S):
                xv[j * S + k] = xv[j * S + k] * inv * wv[k]
            store_group(yrow, m, t, G, j, full, xv, j * S)

        @dev
        def scale(sm, xv, w, yrow, m, inv, t, G, full):
            """y = h * inv * weight; the weight staged at word ``w`` (the row loop) or read
            from global address ``w`` (a split row's chunk)."""
            if full:
                for j in range(H):
                    out_group(sm, xv, w, yrow, m, inv, t, G, j, True)
                for j in range(H, V):
                    out_group(sm, xv, w, yrow, m, inv, t, G, j, True)
            else:
                for j in range(H):
                    out_group(sm, xv, w, yrow, m, inv, t, G, j, False)
                for j in range(H, V):
                    out_group(sm, xv, w, yrow, m, inv, t, G, j, False)
        return scale, out_group

    (scale_staged, _), (scale_global, out_global) = make_scale(True), make_scale(False)
    lanes = make_lanes(io, 0.0)  # slots past a row zero: nothing in the sum of squares
    lanes_place, lanes_load, group_left, HL = lanes.place, lanes.load, lanes.left, lanes.loops

    @dev
    def lanes_keep_h(hrow, m, t, G, j, xv):
        """:func:`keep_h` of group ``j`` where it lies in the row (16 bytes where whole)."""
        k = group_left(m, t, G, j)
        if k >= int32(S):
            keep_h(hrow, m, t, G, j, True, xv)
        elif k > int32(0):
            keep_h(hrow, m, t, G, j, False, xv)

    @dev
    def lanes_out_group(w, yrow, m, inv, t, G, j, xv):
        """Group ``j`` of y (the weight read from global address ``w``) where it lies in the
        row: 16-byte loads and stores where whole, element by element where it ends the
        row, nothing past it."""
        k = group_left(m, t, G, j)
        if k >= int32(S):
            out_global(uint32(0), xv, w, yrow, m, inv, t, G, j, True)
        elif k > int32(0):
            out_global(uint32(0), xv, w, yrow, m, inv, t, G, j, False)

    @dev
    def prologue(sm, ws, t, G, c):
        xa, ra, wa, ya, ha, sx, sr, sy, sh_, n, eps, red = c
        wissue(sm, ws, wa, n, t, G)

    @dev
    def stage(sm, xs, row, t, G, c):
        xa, ra, wa, ya, ha, sx, sr, sy, sh_, n, eps, red = c
        issue(sm, xs, xa + row * sx * esz, n, t, G)
        if resid:
            issue(sm, xs + G * NW, ra + row * sr * esz, n, t, G)
        return zero

    @dev
    def work(sm, xs, ws, row, it, pivot, t, G, c):
        xa, ra, wa, ya, ha, sx, sr, sy, sh_, n, eps, red = c
        rn, full = float32(1) / float32(n), thread_full(t, G, n)  # loop-invariant: hoisted
        n = opaque(n)  # the partial groups' masks: computed in their branch, per row
        xv = cuda.local.array(P, float32)
        ss = sum_squares(sm, xs, ha + row * sh_ * esz, n, full, t, G, xv)
        ss = group_sum(ss, G, red, it & 1)  # one reduction a row: alternate two slots
        inv = rsqrt_ftz(ss * rn + eps)
        scale_staged(sm, xv, ws, ya + row * sy * esz, n, inv, t, G, full)

    loop = make_loop(io, prologue, stage, work)

    @cuda.jit
    def rms_norm_kernel(X, R, W, Y, H, n, rows, sx, sr, sy, sh_, eps, phase, G, chunks, nbuf,
                        WS):
        red = cuda.shared.array((2, MAX_WARPS), float32)
        sm = staging_base(cuda.shared.array(0, uint32))
        xa, ra, wa = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(R, 0)), int64(M.gmem_addr(W, 0))
        ya, ha = int64(M.gmem_addr(Y, 0)), int64(M.gmem_addr(H, 0))
        if phase == 0:  # whole rows, blocks looping over them; the weight staged once
            loop(sm, G, rows, nbuf, ROW, WNW, (xa, ra, wa, ya, ha, sx, sr, sy, sh_, n, eps, red))
            return
        # split rows: block b is chunk b % chunks of row b // chunks; phase 1 stores the
        # chunk's sum of squares (and h), phase 2 sums them and scales the chunk
        row, c, t, c0, m = locate(phase, G, chunks, n, P)
        if row >= rows:
            return
        xv = cuda.local.array(P, float32)
        if resid and phase == 2:  # the finishing pass reads back the stored h
            issue(sm, 0, ha + (row * sh_ + c0) * esz, m, t, G)
        else:
            issue(sm, 0, xa + (row * sx + c0) * esz, m, t, G)
            if resid:
                issue(sm, G * NW, ra + (row * sr + c0) * esz, m, t, G)
        wait()
        if phase == 1:
            ss = sum_squares(sm, 0, ha + (row * sh_ + c0) * esz, m, thread_full(t, G, m), t,
                             G, xv)
            ss = group_sum(ss, G, red, 0)
            if t == 0:
                WS[row * chunks + c] = ss
            return
        ss = zero
        for i in range(t, chunks, G):
            ss += WS[row * chunks + i]
        ss = group_sum(ss, G, red, 1)
        inv = rsqrt_ftz(ss * (float32(1) / float32(n)) + eps)
        load_row(sm, 0, t, G, xv)  # x, or with a residual the h phase 1 stored
        scale_global(sm, xv, wa + c0 * wsz, ya + (row * sy + c0) * esz, m, inv, t, G,
                     thread_full(t, G, m))

    @cuda.jit
    def rms_norm_regs(X, R, W, Y, H, n, rows, sx, sr, sy, sh_, eps, phase, G, chunks, nbuf,
                      WS):
        """The register-row layout (RowConfig "regs", rows without a residual): block b of
        ``G`` threads normalizes row b, loaded straight from global memory into registers,
        the weight read per group from global memory (L1); no staging (perf-notes r43). The
        arguments are the main kernel's; the residual's, ``phase``, ``chunks``, ``nbuf`` and
        ``WS`` are unused."""
        red = cuda.shared.array((2, MAX_WARPS), float32)
        row = int64(cuda.blockIdx.x)
        if row >= rows:
            return
        t = int64(cuda.threadIdx.x)
        xa, wa, ya = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(W, 0)), int64(M.gmem_addr(Y, 0))
        full = thread_full(t, G, n)
        xv = cuda.local.array(P, float32)
        gload_row(xa + row * sx * esz, n, t, G, xv, full)
        ss = group_sum(squares(xv), G, red, 0)
        inv = rsqrt_ftz(ss * (float32(1) / float32(n)) + eps)
        scale_global(uint32(0), xv, wa, ya + row * sy * esz, n, inv, t, G, full)

    rms_norm_regs.nbk_launch_bounds = (MAX_THREADS, 1)

    @cuda.jit
    def rms_norm_lanes(X, R, W, Y, H, n, rows, sx, sr, sy, sh_, eps, phase, G, chunks, nbuf,
                       WS):
        """The lanes layout (RowConfig "lanes", device.make_lanes): short rows, ``G`` (8, 16
        or 32) lanes a row and several rows a warp, loaded straight into registers, the
        weight read per group from global memory (L1); perf-notes r63. With a residual,
        h = x + residual is formed, rounded, stored and normalized. The arguments are the
        main kernel's; ``phase``, ``chunks`` and ``nbuf`` are unused, ``WS`` stands in for
        the reduction scratch the lanes' shuffles do not use."""
        row, t, mine = lanes_place(G, rows)
        xa, ra, wa = int64(M.gmem_addr(X, 0)), int64(M.gmem_addr(R, 0)), int64(M.gmem_addr(W, 0))
        ya, ha = int64(M.gmem_addr(Y, 0)), int64(M.gmem_addr(H, 0))
        xv = cuda.local.array(P, float32)
        lanes_load(xa + row * sx * esz, n, t, G, xv)
        if resid:
            rv = cuda.local.array(P, float32)
            lanes_load(ra + row * sr * esz, n, t, G, rv)
            for e in range(P):
                xv[e] += rv[e]
            if mine:  # h rounded to x's dtype, stored, and what is normalized
                for j in range(HL):
                    lanes_keep_h(ha + row * sh_ * esz, n, t, G, j, xv)
                for j in range(HL, V):
                    lanes_keep_h(ha + row * sh_ * esz, n, t, G, j, xv)
        ss = lanes_sum(squares(xv), G, WS, 0)
        inv = rsqrt_ftz(ss * (float32(1) / float32(n)) + eps)
        if mine:
            for j in range(HL):
                lanes_out_group(wa, ya + row * sy * esz, n, inv, t, G, j, xv)
            for j in range(HL, V):
                lanes_out_group(wa, ya + row * sy * esz, n, inv, t, G, j, xv)

    rms_norm_lanes.nbk_launch_bounds = (MAX_THREADS, 1)

    # .minnctapersm 1: without it ptxas squeezed some variants to 64 registers with spills
    # (layer_norm f32 on sm_90a 16 B, swiglu f32 on sm_80 12 B); how many blocks share
    # an SM is chosen per launch from the real count (host.Call.loop_launch)
    rms_norm_kernel.nbk_launch_bounds = (MAX_THREADS, 1)
    # 16-bit rows without a residual on sm_80+ also run in registers, a block a row
    # (host.wants_regs; the 64-element build by default)
    rms_norm_kernel.nbk_regs = rms_norm_regs if has_wide(kind, sm80, resid) else None
    rms_norm_kernel.nbk_resid = resid
    rms_norm_kernel.nbk_lanes = rms_norm_lanes if P <= PER_THREAD else None
    # H200 run 6 (perf-notes r5): a block per row beat the row loop for f32 (84/92 vs 75/83%
    # of copy) and with a residual (82-92 vs 74-87%); the loop won for 16-bit rows alone.
    rms_norm_kernel.nbk_loop_default = "0" if (resid or kind == "f32") else None
    # H200, session 8 run 6 (perf-notes r11): f32 rows of 8192 (256 threads) with one staging
    # buffer 88.1% of copy against a block per row's 80.4; at rows of 4096 a block per row
    # stays (93.9 against 88.6)
    rms_norm_kernel.nbk_loop_by_threads = {256: "1"} if (kind == "f32" and not resid) else {}
    if P == WIDE_PER_THREAD:  # H200, perf-notes r27: a block per row at rows of 8192 (90.6-91.0
        rms_norm_kernel.nbk_loop_by_threads = {128: "0"}  # against 88.2-88.5 for its pairs)
    elif has_wide(kind, sm80, resid):  # r24, r27: rows of 4096 in blocks of two rows with one
        rms_norm_kernel.nbk_pairs_by_threads = {128: (2, 1)}  # buffer, 94.1-94.3 against
        # 92.8-93.2 for two buffers (three samples on the H200; above 30 GB/s an SM only)
    rms_norm_kernel.nbk_per_thread = P
    rms_norm_kernel.nbk_row_bytes = ROW * 4  # staged per thread per buffer
    rms_norm_kernel.nbk_vec_bytes = WNW * 4  # the weight, staged once per thread (phase 0)
    return rms_norm_kernel


SIG = (host.BYTES,) * 5 + (types.int64,) * 6 + (types.float32,) + (types.int64,) * 4 + \
    (host.F32_BUF,)
_KEY = host.key_function("rms_norm", ("x", "weight", "residual", "out", "residual_out"),
                         ("eps",))


def wide(n: int, config) -> bool:
    """Whether a 16-bit rms_norm of rows of ``n`` takes the 64-element build: a user's config
    that asks for it (``per_thread=64``), or, with no layout forced, rows of
    :data:`WIDE_ROWS` on a GPU above 30 GB/s of DRAM an SM (``config.wide_dram``)."""
    if config is not None:
        return config.per_thread == WIDE_PER_THREAD
    if os.environ.get("NBKERNELS_ROW_VARIANT") or not WIDE_ROWS[0] <= n <= WIDE_ROWS[1]:
        return False
    return wide_dram(host.sm_limits())


def rms_norm(x, weight, eps=1e-6, *, residual=None, out=None, residual_out=None, stream=None,
             config=None):
    """RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    ``x``: float16, bfloat16 or float32, any leading shape; ``weight``: length ``x.shape[-1]``,
    x's dtype or float32. Statistics in float32. With ``residual`` (like x), first computes
    ``h = x + residual`` (rounded to x's dtype), normalizes h, and returns
    ``NormWithResidual(out, residual)`` with h as ``residual``; ``residual_out`` receives h in
    place (it may be ``residual`` itself). ``out`` may be ``x``. ``config`` (a
    :class:`RowConfig`) or env ``NBKERNELS_ROW_VARIANT`` forces a layout; for 16-bit rows
    without a residual on sm_80+, a config's ``per_thread=64`` picks the build whose threads
    hold 64 elements (by default rows of 4097-8192 on GPUs with the H200's DRAM an SM).
    """
    args = (x, weight, residual, out, residual_out)
    key, ptrs = _KEY(args, (type(eps), config))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            res = rep.fire(args, ptrs, (float(eps),), stream)
            if res is not repeat.DECLINED:
                return res
    named, ptrs = host.by_name(_KEY, args, ptrs)
    return _rms_norm(x, weight, eps, residual=residual, out=out, residual_out=residual_out,
                     stream=stream, config=config, named=named, key=key, ptrs=ptrs)


@repeat.stream_ordered(0, "x")
def _rms_norm(x, weight, eps, *, residual, out, residual_out, stream=None, config, named, key,
              ptrs):
    """A call the repeat path did not take (as ``layer_norm_kernel._layer_norm``)."""
    if host.needs_device_copy(x, weight, residual, out, residual_out):
        outs = {"out": out, "residual_out": residual_out} if residual is not None else {"out": out}
        res = host.via_device(
            lambda x, weight, residual: rms_norm(x, weight, eps, residual=residual,
                                                 config=config),
            {"x": x, "weight": weight, "residual": residual}, outs, "rms_norm")
        return NormWithResidual(*res) if residual is not None else res
    call = host.Call("rms_norm", stream)
    X = call.rows(x, "x")
    W = call.vector(weight, "weight", X)
    R = call.rows(residual, "residual", X) if residual is not None else None
    if residual is None and residual_out is not None:
        raise NbkernelsError("rms_norm: residual_out needs residual")
    Y = call.output(out, "out", X)
    H = call.output(residual_out, "residual_out", X) if R is not None else None
    hw = for_arch(call.arch()).sm80
    can = has_wide(X.kind, hw, R is not None)
    lanes = host.wants_lanes(call, X, config)
    if lanes and config is None:  # several short rows a warp (perf-notes r63)
        config = host.lanes_config(X, LANES_GROUPS)
    regs = not lanes and host.wants_regs(call, X, config, can, auto_rows=REGS_RMS_ROWS)
    P = WIDE_PER_THREAD if can and (regs or wide(X.n, config)) else PER_THREAD
    if lanes:
        P = config.per_thread if config is not None else PER_THREAD
    elif regs and config is None:
        config = regs_config(X.n, (PER_THREAD, WIDE_PER_THREAD))
        P = config.per_thread
    elif not regs:  # narrow rows: the slot groups a thread they need (perf-notes r54-r56)
        P = host.narrow_per_thread(X, config, P)
    kern = build(X.kind, W.kind, hw, R is not None, P)
    cfg = call.config(X, config, kern)
    xb, wb, yb = call.buf(X), call.buf(W), call.buf(Y)
    rb, hb = call.buf(R), call.buf(H)

    def args(phase, nbuf, ws):
        return [xb, rb, wb, yb, hb, np.int64(X.n), np.int64(X.rows), np.int64(X.stride),
                np.int64(R.stride if R else 0), np.int64(Y.stride), np.int64(H.stride if H else 0),
                np.float32(eps), np.int64(phase), np.int64(cfg.threads), np.int64(cfg.chunks),
                np.int64(nbuf), ws]

    tags = ("x", "residual" if R else None, "weight", "out", "residual_out" if H else None,
            *[None] * 6, "eps", None, None, None, None)  # run_phases tags the workspace
    host.run_phases(call, kern, SIG, cfg, X.rows, NSTAT, args, tags,
                    ("rms_norm", X.kind, W.kind, hw, R is not None, P))
    host.remember(key, call, ("out", "residual_out") if R is not None else ("out",), named,
                  ptrs, NormWithResidual._make if R is not None else None, _KEY.scalars)
    if R is not None:
        return NormWithResidual(*call.finish(Y, H))
    return call.finish(Y)
