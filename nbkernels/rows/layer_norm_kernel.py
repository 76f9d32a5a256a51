"""LayerNorm: ``y = (x - mean) / sqrt(var + eps) * weight + bias`` over the last axis
(biased variance, as torch). The row stays in registers between the mean and the variance
pass, so the variance is the exact two-pass one, not E[x^2] - E[x]^2."""
from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, float32, int64, types, uint32

from ..intrinsics import memory as M
from . import host
from .config import for_arch
from .device import (ELEMENT_BYTES, MAX_WARPS, PER_THREAD, group_sum, launch_bounds, locate,
                     make_io)

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


@functools.lru_cache(maxsize=None)
def build(kind: str, wkind: str, bkind: str, hw_bf16: bool, has_w: bool, has_b: bool):
    io = make_io(kind, hw_bf16)
    wio = make_io(wkind, hw_bf16, kind)
    bio = make_io(bkind, hw_bf16, kind)
    load, store, get, put, elem, first = io.load, io.store, io.get, io.put, io.elem, io.first
    refresh = io.refresh
    wload, wget, bload, bget = wio.load, wio.get, bio.load, bio.get
    P, esz = PER_THREAD, ELEMENT_BYTES[kind]
    wsz, bsz = ELEMENT_BYTES[wkind], ELEMENT_BYTES[bkind]
    NW, WW, BW = io.words, wio.words, bio.words
    zero = float32(0)
    held = NW + (WW if has_w else 0) + (BW if has_b else 0)
    # Prefetching weight and bias before the reductions overlaps their latency but holds
    # them across it: measured on the H200 it helps bf16 (x, w, b: 48 words) and costs f32
    # (96 words: 58% -> 47% of copy bandwidth at 8192 x 8192), so f32 loads them after, one
    # at a time (both at once spilled: nbkernels compile). With a 16-bit x the late path
    # rounds the normalized value to x's dtype before the weight: one more rounding.
    early = held <= 48

    @cuda.jit
    def layer_norm_kernel(X, W, B, Y, n, rows, sx, sy, eps, phase, G, chunks, WS):
        red = cuda.shared.array((4, MAX_WARPS), float32)
        row, c, t = locate(phase, G, chunks)
        if row >= rows:
            return
        cap = G * P
        c0 = c * cap
        m = min(n - c0, cap)
        raw = cuda.local.array(NW, uint32)
        wraw = cuda.local.array(WW, uint32)
        braw = cuda.local.array(BW, uint32)
        xrow = int64(M.gmem_addr(X, 0)) + row * sx * esz
        if early and phase != 1:  # issued before the reductions: the latencies overlap
            if has_w:
                wload(int64(M.gmem_addr(W, 0)) + c0 * wsz, m, t, G, wraw, 0)
            if has_b:
                bload(int64(M.gmem_addr(B, 0)) + c0 * bsz, m, t, G, braw, 0)
        load(xrow + c0 * esz, m, t, G, raw, 0)
        if phase == 2:
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
        else:
            # sums of x - x0 (x0: the row's first element): a row of equal values gets its
            # mean exactly, so (x - mean) is exactly 0 and the output exactly the bias
            x0 = first(xrow)
            s = zero
            for i in range(P):
                s += get(raw, i) - x0 if elem(i, t, G) < m else zero
            mean = x0 + group_sum(s, G, red, 0) / float32(m)
            d = zero
            for i in range(P):
                dv = get(raw, i) - mean
                d += dv * dv if elem(i, t, G) < m else zero
            m2 = group_sum(d, G, red, 1)
            if phase == 1:
                if t == 0:
                    WS[2 * (row * chunks + c)] = mean
                    WS[2 * (row * chunks + c) + 1] = m2
                return
        rstd = float32(1) / math.sqrt(m2 / float32(n) + eps)
        refresh(raw)
        for i in range(P):
            y = (get(raw, i) - mean) * rstd
            if early and has_w:
                y *= wget(wraw, i)
            if early and has_b:
                y += bget(braw, i)
            put(raw, i, y)
        if not early:  # one vector at a time: x, weight and bias never all live together
            if has_w:
                wload(int64(M.gmem_addr(W, 0)) + c0 * wsz, m, t, G, wraw, 0)
                for i in range(P):
                    put(raw, i, get(raw, i) * wget(wraw, i))
            if has_b:
                bload(int64(M.gmem_addr(B, 0)) + c0 * bsz, m, t, G, braw, 0)
                for i in range(P):
                    put(raw, i, get(raw, i) + bget(braw, i))
        store(int64(M.gmem_addr(Y, 0)) + (row * sy + c0) * esz, m, t, G, raw)

    layer_norm_kernel.nbk_launch_bounds = launch_bounds(held if early else NW)
    return layer_norm_kernel


SIG = (host.BYTES,) * 4 + (types.int64,) * 4 + (types.float32,) + (types.int64,) * 3 + \
    (host.F32_BUF,)


def layer_norm(x, weight=None, bias=None, eps=1e-5, *, out=None, stream=None, config=None):
    """LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    ``x``: float16, bfloat16 or float32, any leading shape; ``weight`` and ``bias`` (either
    may be None): length ``x.shape[-1]``, x's dtype or float32. Statistics in float32 with the
    exact two-pass variance. ``out`` may be ``x``. ``config`` (a :class:`RowConfig`) or env
    ``NBKERNELS_ROW_VARIANT`` forces a layout.
    """
    named = {"x": x, "weight": weight, "bias": bias, "out": out}
    key, ptrs = host.fast_key("layer_norm", named, (type(eps), config))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            return rep(named, ptrs, {"eps": float(eps)}, stream)
    if host.needs_device_copy(x, weight, bias, out):
        return host.via_device(
            lambda x, weight, bias: layer_norm(x, weight, bias, eps, config=config),
            {"x": x, "weight": weight, "bias": bias}, {"out": out})
    call = host.Call("layer_norm", stream)
    X = call.rows(x, "x")
    W = call.vector(weight, "weight", X) if weight is not None else None
    B = call.vector(bias, "bias", X) if bias is not None else None
    Y = call.output(out, "out", X)
    cfg = call.config(X, config)
    hw = for_arch(call.arch()).hw_bf16
    wk = W.kind if W else "f32"
    bk = B.kind if B else "f32"
    kern = build(X.kind, wk, bk, hw, W is not None, B is not None)
    xb, wb, bb, yb = call.buf(X), call.buf(W), call.buf(B), call.buf(Y)

    def args(phase, ws):
        return [xb, wb, bb, yb, np.int64(X.n), np.int64(X.rows), np.int64(X.stride),
                np.int64(Y.stride), np.float32(eps), np.int64(phase), np.int64(cfg.threads),
                np.int64(cfg.chunks), ws]

    tags = ("x", "weight" if W else None, "bias" if B else None, "out", None, None, None, None,
            "eps", None, None, None)
    host.run_phases(call, kern, SIG, cfg, X.rows, NSTAT, args, tags,
                    ("layer_norm", X.kind, wk, bk, hw, W is not None, B is not None))
    host.remember(key, call, ("out",))
    return call.finish(Y)
