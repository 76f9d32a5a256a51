"""SwiGLU: ``silu(gate) * up`` with ``silu(g) = g / (1 + exp(-g))``, elementwise over rows;
``gate`` and ``up`` are two arrays, or the two halves of one array's last axis."""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, int64, types, uint32

from ..errors import NbkernelsError
from ..intrinsics import memory as M
from .. import repeat
from . import host
from .config import for_arch
from .device import (ELEMENT_BYTES, MAX_THREADS, PER_THREAD, dev, fast_exp, make_io, make_loop,
                     opaque, rcp_ftz, staging_base)


def swiglu_ref(gate, up=None):
    g = np.asarray(gate, np.float64)
    if up is None:
        g, u = np.split(g, 2, axis=-1)
    else:
        u = np.asarray(up, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return g / (1.0 + np.exp(-g)) * u


@functools.lru_cache(maxsize=None)
def build(kind: str, sm80: bool):
    io = make_io(kind, sm80)
    issue, load_group, store_group, thread_full = (io.issue, io.load_group, io.store_group,
                                                   io.thread_full)
    P, esz, V, S, NW = PER_THREAD, ELEMENT_BYTES[kind], io.groups, io.slot, io.words
    ROW = 2 * NW  # words a thread stages per buffer: gate, then up
    one = float32(1)

    @dev
    def where(item, n, G, chunks):
        """(row, first element, elements) of work item ``item``: a row, or a split row's chunk."""
        if chunks == 1:
            return item, int64(0), n
        row = item // chunks
        c0 = (item - row * chunks) * G * P
        return row, c0, min(n - c0, G * P)

    @dev
    def prologue(sm, vb, t, G, c):
        pass

    @dev
    def stage(sm, xs, item, t, G, c):
        ga, ua, ya, sg, su, sy, n, chunks = c
        row, c0, m = where(item, n, G, chunks)
        issue(sm, xs, ga + (row * sg + c0) * esz, m, t, G)
        issue(sm, xs + G * NW, ua + (row * su + c0) * esz, m, t, G)
        return float32(0)

    @dev
    def out_group(sm, xs, t, G, j, full, yrow, m):
        """silu(gate) * up of slot group ``j``: x * up / (1 + 2^(-x log2 e)) with one
        MUFU.EX2 and one MUFU.RCP (the IEEE division was ~8 instructions and a branch;
        rcp.approx is within 1 ulp). x = -inf: 0 * -inf = NaN, as NumPy's formula gives."""
        gv = cuda.local.array(S, float32)
        uv = cuda.local.array(S, float32)
        load_group(sm, xs, t, G, j, gv, 0)
        load_group(sm, xs + G * NW, t, G, j, uv, 0)
        for k in range(S):
            x = gv[k]
            gv[k] = x * rcp_ftz(one + fast_exp(-x)) * uv[k]
        store_group(yrow, m, t, G, j, full, gv, 0)

    @dev
    def work(sm, xs, vb, item, it, pivot, t, G, c):
        ga, ua, ya, sg, su, sy, n, chunks = c
        row, c0, m = where(item, n, G, chunks)
        m = opaque(m)  # the partial groups' masks: computed in their branch, per item
        yrow = ya + (row * sy + c0) * esz
        if thread_full(t, G, m):  # padding is zero: silu(0) * 0, never stored
            for j in range(V):
                out_group(sm, xs, t, G, j, True, yrow, m)
        else:
            for j in range(V):
                out_group(sm, xs, t, G, j, False, yrow, m)

    loop = make_loop(io, prologue, stage, work)

    @cuda.jit
    def swiglu_kernel(Gt, U, Y, n, rows, sg, su, sy, G, chunks, nbuf):
        # Blocks loop over work items (rows, or chunks of split rows: elementwise, one pass),
        # gate and up staged with cp.async. Staged rows also let a store go before the next
        # load (registers filled by ordinary loads could not: a store could alias a later
        # load, and a load-compute-store loop per 16-byte group measured 47% of copy
        # bandwidth in bf16 at 8192 x 8192 on the H200, loading all first 76%).
        sm = staging_base(cuda.shared.array(0, uint32))
        ga, ua, ya = int64(M.gmem_addr(Gt, 0)), int64(M.gmem_addr(U, 0)), int64(M.gmem_addr(Y, 0))
        loop(sm, G, rows * chunks, nbuf, ROW, 0, (ga, ua, ya, sg, su, sy, n, chunks))

    # .minnctapersm 1: without it ptxas squeezed some variants to 64 registers with spills
    # (layer_norm f32 on sm_90a 16 B, swiglu f32 on sm_80 12 B); how many blocks share
    # an SM is chosen per launch from the real count (host.Call.loop_launch)
    swiglu_kernel.nbk_launch_bounds = (MAX_THREADS, 1)
    # H200 run 6 (perf-notes r5): a block per row beat the row loop in every case measured
    # (bf16 80/88 vs 76/80%, f32 91/98 vs 84/86% of copy).
    swiglu_kernel.nbk_loop_default = "0"
    swiglu_kernel.nbk_row_bytes = ROW * 4  # staged per thread per buffer
    swiglu_kernel.nbk_vec_bytes = 0
    return swiglu_kernel


SIG = (host.BYTES,) * 3 + (types.int64,) * 8
_KEY = host.key_function("swiglu", ("gate", "up", "out"))


def _halves(x):
    if not (isinstance(x, np.ndarray) or type(x).__module__.split(".")[0] in ("cupy", "torch")):
        raise NbkernelsError(f"swiglu: one packed array must be NumPy, CuPy or torch, got "
                             f"{type(x).__name__}; pass gate and up separately")
    if len(x.shape) == 0 or x.shape[-1] % 2:
        raise NbkernelsError(f"swiglu: a packed gate/up array needs an even last axis, got "
                             f"shape {tuple(x.shape)}")
    d = x.shape[-1] // 2
    return x[..., :d], x[..., d:], d


def swiglu(gate, up=None, *, out=None, stream=None, config=None):
    """``silu(gate) * up``. With ``up`` None, ``gate`` holds ``[gate | up]`` along its last
    axis (length 2d) and the result has length d. float16, bfloat16 or float32 (both inputs
    alike), computed in float32; ``out`` may be ``gate`` or ``up``."""
    args = (gate, up, out)
    key, ptrs = _KEY(args, (config,))
    if key is not None:
        rep = host._FAST.get(key)
        if rep is not None:
            res = rep.fire(args, ptrs, (), stream)
            if res is not repeat.DECLINED:
                return res
    named, ptrs = host.by_name(_KEY, args, ptrs)
    return _swiglu(gate, up, out=out, stream=stream, config=config, named=named, key=key,
                   ptrs=ptrs)


@repeat.stream_ordered(0, "gate")
def _swiglu(gate, up, *, out, stream=None, config, named, key, ptrs):
    """A call the repeat path did not take (as ``layer_norm_kernel._layer_norm``)."""
    if host.needs_device_copy(gate, up, out):
        if up is None:  # split the host array here: device copies of the halves follow
            gate, up, _ = _halves(gate)
        return host.via_device(lambda gate, up: swiglu(gate, up, config=config),
                               {"gate": gate, "up": up}, {"out": out}, "swiglu")
    call = host.Call("swiglu", stream)
    if up is None:
        g_obj, u_obj, d = _halves(gate)
        Gr = call.rows(g_obj, "gate")
        Ur = call.rows(u_obj, "gate (up half)", Gr)
        up_tag = ("gate", d * Gr.view.dtype.itemsize)  # the up half starts d elements in
    else:
        Gr = call.rows(gate, "gate")
        Ur = call.rows(up, "up", Gr)
        up_tag = "up"
    Y = call.output(out, "out", Gr)
    hw = for_arch(call.arch()).sm80
    kern = build(Gr.kind, hw)
    cfg = call.config(Gr, config, kern)
    if Gr.rows:  # elementwise: a split layout is one pass over chunks, looped like rows
        gb, ub, yb = call.buf(Gr), call.buf(Ur), call.buf(Y)
        call.loop_launch(
            kern, SIG, cfg, cfg.grid(Gr.rows),
            lambda nbuf: [gb, ub, yb, np.int64(Gr.n), np.int64(Gr.rows), np.int64(Gr.stride),
                          np.int64(Ur.stride), np.int64(Y.stride), np.int64(cfg.threads),
                          np.int64(cfg.chunks), np.int64(nbuf)],
            ("gate", up_tag, "out") + (None,) * 8, ("swiglu", Gr.kind, hw))
    host.remember(key, call, ("out",), named, ptrs)
    return call.finish(Y)
