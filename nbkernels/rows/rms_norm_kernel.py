"""RMSNorm: ``y = x / sqrt(mean(x**2) + eps) * weight`` over the last axis, optionally on
``h = x + residual`` (stored too: the updated residual stream of a pre-norm transformer)."""
from __future__ import annotations

import functools
import math
from collections import namedtuple

import numpy as np
from numba import cuda, float32, int64, types, uint32

from ..errors import NbkernelsError
from ..intrinsics import memory as M
from . import host
from .device import ELEMENT_BYTES, MAX_THREADS, MAX_WARPS, group_sum, locate, make_io

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


@functools.lru_cache(maxsize=None)
def build(kind: str, wkind: str, sm80: bool, resid: bool):
    io = make_io(kind, sm80)
    wio = make_io(wkind, sm80, kind)
    issue, wait, fetch, put_back, gstore = io.issue, io.wait, io.fetch, io.put_back, io.gstore
    get, put, wload, wget = io.get, io.put, wio.gload, wio.get
    esz, wsz, V, S, GW, WGW, NW = (ELEMENT_BYTES[kind], ELEMENT_BYTES[wkind], io.groups,
                                   io.slot, io.gw, wio.gw, io.words)
    NB = 2 if resid else 1  # staged buffers per group: x (and the residual)
    zero = float32(0)

    @cuda.jit
    def rms_norm_kernel(X, R, W, Y, H, n, rows, sx, sr, sy, sh_, eps, phase, G, chunks, WS):
        red = cuda.shared.array((2, MAX_WARPS), float32)
        sm = cuda.shared.array(0, uint32)
        row, c, t, c0, m = locate(phase, G, chunks, n)
        if row >= rows:
            return
        xs = (cuda.threadIdx.x // G) * NB * G * NW  # this group's staging area (words)
        rs = xs + G * NW
        if resid and phase == 2:  # the finishing pass reads back the stored h
            issue(sm, xs, int64(M.gmem_addr(H, 0)) + (row * sh_ + c0) * esz, m, t, G)
        else:
            issue(sm, xs, int64(M.gmem_addr(X, 0)) + (row * sx + c0) * esz, m, t, G)
            if resid:
                issue(sm, rs, int64(M.gmem_addr(R, 0)) + (row * sr + c0) * esz, m, t, G)
        wait()
        tmp = cuda.local.array(GW, uint32)
        if phase == 2:
            ss = zero
            for i in range(t, chunks, G):
                ss += WS[row * chunks + i]
            ss = group_sum(ss, G, red, 1)
        else:
            ss = zero
            for j in range(V):
                fetch(sm, xs, t, G, j, tmp)
                if resid:  # h = x + residual, rounded to x's dtype, stored and normalized
                    rtmp = cuda.local.array(GW, uint32)
                    fetch(sm, rs, t, G, j, rtmp)
                    for k in range(S):
                        put(tmp, k, get(tmp, k) + get(rtmp, k))
                    put_back(sm, xs, t, G, j, tmp)
                    gstore(int64(M.gmem_addr(H, 0)) + (row * sh_ + c0) * esz, m, t, G, j, tmp)
                for k in range(S):
                    v = get(tmp, k)
                    ss += v * v
            ss = group_sum(ss, G, red, 0)
            if phase == 1:
                if t == 0:
                    WS[row * chunks + c] = ss
                return
        inv = float32(1) / math.sqrt(ss / float32(n) + eps)
        wtmp = cuda.local.array(WGW, uint32)
        for j in range(V):
            fetch(sm, xs, t, G, j, tmp)
            wload(int64(M.gmem_addr(W, 0)) + c0 * wsz, m, t, G, j, wtmp)
            for k in range(S):
                put(tmp, k, get(tmp, k) * inv * wget(wtmp, k))
            gstore(int64(M.gmem_addr(Y, 0)) + (row * sy + c0) * esz, m, t, G, j, tmp)

    rms_norm_kernel.nbk_launch_bounds = (MAX_THREADS,)
    rms_norm_kernel.nbk_staged = NB
    return rms_norm_kernel


SIG = (host.BYTES,) * 5 + (types.int64,) * 6 + (types.float32,) + (types.int64,) * 3 + \
    (host.F32_BUF,)


def rms_norm(x, weight, eps=1e-6, *, residual=None, out=None, residual_out=None, stream=None,
             config=None):
    """RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    ``x``: float16, bfloat16 or float32, any leading shape; ``weight``: length ``x.shape[-1]``,
    x's dtype or float32. Statistics in float32. With ``residual`` (like x), first computes
    ``h = x + residual`` (rounded to x's dtype), normalizes h, and returns
    ``NormWithResidual(out, residual)`` with h as ``residual``; ``residual_out`` receives h in
    place (it may be ``residual`` itself). ``out`` may be ``x``. ``config`` (a
    :class:`RowConfig`) or env ``NBKERNELS_ROW_VARIANT`` forces a layout.
    """
    named = {"x": x, "weight": weight, "residual": residual, "out": out,
             "residual_out": residual_out}
    key, ptrs = host.fast_key("rms_norm", named, (type(eps), config))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            return rep(named, ptrs, {"eps": float(eps)}, stream)
    if host.needs_device_copy(x, weight, residual, out, residual_out):
        outs = {"out": out, "residual_out": residual_out} if residual is not None else {"out": out}
        res = host.via_device(
            lambda x, weight, residual: rms_norm(x, weight, eps, residual=residual,
                                                 config=config),
            {"x": x, "weight": weight, "residual": residual}, outs)
        return NormWithResidual(*res) if residual is not None else res
    call = host.Call("rms_norm", stream)
    X = call.rows(x, "x")
    W = call.vector(weight, "weight", X)
    R = call.rows(residual, "residual", X) if residual is not None else None
    if residual is None and residual_out is not None:
        raise NbkernelsError("rms_norm: residual_out needs residual")
    Y = call.output(out, "out", X)
    H = call.output(residual_out, "residual_out", X) if R is not None else None
    cfg = call.config(X, config, 2 if residual is not None else 1)
    from .config import for_arch

    hw = for_arch(call.arch()).sm80
    kern = build(X.kind, W.kind, hw, R is not None)
    xb, wb, yb = call.buf(X), call.buf(W), call.buf(Y)
    rb, hb = call.buf(R), call.buf(H)

    def args(phase, ws):
        return [xb, rb, wb, yb, hb, np.int64(X.n), np.int64(X.rows), np.int64(X.stride),
                np.int64(R.stride if R else 0), np.int64(Y.stride), np.int64(H.stride if H else 0),
                np.float32(eps), np.int64(phase), np.int64(cfg.threads), np.int64(cfg.chunks), ws]

    tags = ("x", "residual" if R else None, "weight", "out", "residual_out" if H else None,
            *[None] * 6, "eps", None, None, None)  # the workspace comes last: run_phases tags it
    host.run_phases(call, kern, SIG, cfg, X.rows, X.view.dtype.itemsize, NSTAT, args, tags,
                    ("rms_norm", X.kind, W.kind, hw, R is not None))
    host.remember(key, call, ("out", "residual_out") if R is not None else ("out",),
                  NormWithResidual._make if R is not None else None)
    if R is not None:
        return NormWithResidual(*call.finish(Y, H))
    return call.finish(Y)
