"""Executing a GEMM plan: copies where the plan asks, the output, the launch."""
from __future__ import annotations

import dataclasses
import functools
import itertools
import secrets
import threading

import numpy as np
from numba import cuda, types

from .. import arrays
from ..errors import NbkernelsError
from .. import runner
from . import api, mma_kernel
from .config import ELEMENT_BYTES

_MAX_GRID_Y = 65535


def _kmajor_copy(view, name, transpose, pad):
    """A K-major copy of an operand in its own framework.

    The copy's rows (of K elements) are contiguous and start every ``pad`` elements (rounded up
    from K), so the copy meets cp.async's 16-byte alignment. For b (``transpose``) the rows are
    its columns: the copy is column-major, as the K-major b layout wants.
    """
    obj = view.obj
    if view.host and not isinstance(obj, np.ndarray):
        obj = np.asarray(obj)
    if view.framework == "torch":
        src = obj.transpose(-1, -2) if transpose else obj
        rows, k = src.shape[-2], src.shape[-1]
        buf = obj.new_zeros(tuple(src.shape[:-2]) + (rows, -(-k // pad) * pad))
        buf[..., :k] = src
        new = buf[..., :k]
        new = new.transpose(-1, -2) if transpose else new
    else:
        if view.framework == "cupy":
            import cupy as xp
        elif view.host:
            xp = np
        else:  # another CUDA-array-interface object: through CuPy-less host round trip
            obj = cuda.as_cuda_array(obj).copy_to_host()
            xp = np
        src = obj.swapaxes(-1, -2) if transpose else obj
        rows, k = src.shape[-2], src.shape[-1]
        buf = xp.zeros(tuple(src.shape[:-2]) + (rows, -(-k // pad) * pad), src.dtype)
        buf[..., :k] = src
        new = buf[..., :k]
        new = new.swapaxes(-1, -2) if transpose else new
        if xp is np and not view.host:
            new = runner.DeviceView(cuda.to_device(buf), new.shape, new.strides)
    copied = arrays.as_view(new, name)
    kdim = -2 if transpose else -1  # the K axis: a's last, b's first of the two
    if copied.size and copied.shape[kdim] > 1 and copied.strides[kdim] != 1:
        raise NbkernelsError(f"gemm: internal: the K-major copy of {name} has strides "
                             f"{copied.strides}")
    return copied


def _bstride(view):
    return view.strides[0] if view.ndim == 3 and view.shape[0] > 1 else 0


def _c_strides(view, out_shape):
    """(batch, row, col) element strides of c broadcast to the result shape."""
    full = (1,) * (3 - view.ndim) + tuple(view.shape)
    st = (0,) * (3 - view.ndim) + tuple(view.strides)
    shape3 = (1,) * (3 - len(out_shape)) + tuple(out_shape)
    return tuple(0 if d == 1 and t != 1 else s for d, s, t in zip(full, st, shape3))


_LAST = threading.local()  # the last launch's arguments, for the repeat-call fast path


def _launch(kernel, sig, grid, block, smem, stream, args, key_parts, arch, tag=None):
    rec = runner.launch_jit(kernel, sig, grid, block, smem, stream, args, key_parts, arch)
    if rec is not None and getattr(_LAST, "launches", None) is not None:
        # the fast path replays this block (the tag says where its per-call values go)
        _LAST.launches.append((tag or key_parts[0],) + rec)


def execute(p: "api.Plan", alpha, beta, stream=None, epilogue=None, extras=()):
    """Run a plan; returns the result in the caller's array type."""
    if p.host and not runner.simulated():
        if not cuda.is_available():
            raise NbkernelsError("gemm: no CUDA GPU found; set NUMBA_ENABLE_CUDASIM=1 to run "
                                 "in numba's simulator")
        return _via_device(p, alpha, beta, stream, epilogue, extras)
    if not p.host and runner.simulated():
        raise NbkernelsError("gemm: in numba's simulator, pass NumPy arrays")
    va, vb, vc = p.a, p.b, p.c
    pad = 16 // ELEMENT_BYTES.get(p.kind, 4) if p.variant != "simt" else 1
    for op, _ in p.copies:
        if op == "a":
            va = _kmajor_copy(va, "a", transpose=False, pad=pad)
        else:
            vb = _kmajor_copy(vb, "b", transpose=True, pad=pad)
    batched = va.ndim == 3 or vb.ndim == 3
    out_shape = (p.batch, p.m, p.n) if batched else (p.m, p.n)
    handle = 0 if runner.simulated() else arrays.current_stream_handle(va.framework, va.device, stream)
    result = p.out.obj if p.out is not None else runner.empty(va, out_shape, p.result_dtype,
                                                             handle)
    vd = p.out if p.out is not None else arrays.as_view(result, "out")
    if p.m == 0 or p.n == 0 or p.batch == 0:
        return result
    d3 = (_bstride(vd),) + tuple(vd.strides[-2:])
    c3 = _c_strides(vc, out_shape) if vc is not None else (0, 0, 0)
    beta_eff = beta if vc is not None else 0
    ext, ext_types = _extras(extras)
    if not runner.simulated():  # CUDA-array-interface arguments produced on another stream
        arrays.await_producers(handle, [("a", p.a), ("b", p.b), ("c", p.c), ("out", p.out)] + [
            (f"extra[{i}]", v) for i, v in enumerate(ext) if isinstance(v, arrays.ArrayView)])
    epi_key = None if epilogue is None else id(epilogue)
    if p.variant == "simt":
        from . import simt_kernel as sk

        el = {"f32": np.float32, "f64": np.float64}[p.kind]
        A, B, D = runner.flat(va, el), runner.flat(vb, el), runner.flat(vd, el)
        C = runner.flat(vc, el) if vc is not None else D
        kern = api._simt(p.kind, epilogue, len(ext))
        gm, gn = -(-p.m // sk.BM), -(-p.n // sk.BN)
        scal = [p.m, p.n, p.k, va.strides[-2], va.strides[-1], vb.strides[-2], vb.strides[-1],
                c3[1], c3[2], d3[1], d3[2]]
        bst = [_bstride(va), _bstride(vb), c3[0], d3[0]]
        _batched_launch(kern, simt_sig(p.kind, ext_types), gm * gn, sk.THREADS, 0, handle, p.batch, [A, B, C, D],
                        bst, bst, scal, [el(alpha), el(beta_eff), np.int32(gm), np.int32(gn), ext],
                        ("simt", p.kind, epi_key), p.arch)
        return result
    m, n, a_km, b_km, tag = p.m, p.n, p.a_kmajor, p.b_kmajor, "mma"
    if p.swap:  # D^T = B^T A^T (api.plan): b^T as the K-major a, a^T as the N-major b
        va, vb = _transposed(vb), _transposed(va)
        m, n, a_km, b_km, tag = p.n, p.m, True, False, "mma-swapped"
        c3, d3 = (c3[0], c3[2], c3[1]), (d3[0], d3[2], d3[1])
        if epilogue is not None:
            epilogue = swapped_epilogue(epilogue, len(ext))
            epi_key = id(epilogue)
    A, B, D = runner.flat(va, np.uint8), runner.flat(vb, np.uint8), runner.flat(vd, np.uint8)
    C = runner.flat(vc, np.uint8) if vc is not None else D
    lda = api.leading_dim(va, "a", a_km)
    ldb = api.leading_dim(vb, "b", b_km)
    sm75 = p.variant == "sm75"
    gm, gn = -(-m // p.tile.bm), -(-n // p.tile.bn)
    at = {"s8": types.int32, "f64": types.float64}.get(p.kind, types.float32)
    cast = {"s8": np.int32, "f64": np.float64}.get(p.kind, np.float32)
    esz, osz = ELEMENT_BYTES[p.kind], p.result_dtype.itemsize
    bst = [_bstride(va), _bstride(vb), c3[0], d3[0]]
    if p.splits > 1:
        _split_k(p, va, A, B, C, D, lda, ldb, c3, d3, bst, gm, gn, alpha, beta_eff, ext,
                 ext_types, epilogue, epi_key, handle, sm75, at, cast, esz, osz)
        return result
    # 32-bit stores of result pairs: 16-bit results, unit column stride, 4-byte aligned rows.
    d_ptr = vd.ptr if not vd.host else vd.obj.__array_interface__["data"][0]
    def aligned(nbytes):  # D, its rows and its batches start on nbytes (16-bit results)
        return d_ptr % nbytes == 0 and (d3[1] * 2) % nbytes == 0 and (d3[0] * 2) % nbytes == 0

    pair = p.result_dtype.itemsize == 2 and d3[2] == 1 and aligned(4)
    if p.variant == "sm90a":
        # staged 16-byte stores for tiles inside the columns: 16-byte aligned rows, and room
        # for the staging behind the ring
        from ..smem import device_limits

        if pair and aligned(16) and p.tile.stages_in(device_limits()[1]):
            pair = 2
        _sm90a(p, va, vb, C, D, c3, d3, alpha, beta_eff, ext, ext_types, epilogue, epi_key,
               handle, pair)
        return result
    kern = api._mma(p.tile, p.kind, a_km, b_km, p.aligned, sm75, epilogue, len(ext), pair)
    scal = [m, n, p.k, lda, ldb, c3[1], c3[2], d3[1], d3[2]]
    _batched_launch(kern, _mma_sig(at, ext_types), gm * gn, p.tile.threads, kern.nbk_smem_bytes,
                    handle, p.batch, [A, B, C, D],
                    [bst[0] * esz, bst[1] * esz, bst[2] * osz, bst[3] * osz], bst, scal,
                    [cast(alpha), cast(beta_eff), np.int32(gm), np.int32(gn), np.int32(1),
                     np.int64(0), ext],
                    ("mma", p.tile.key, p.kind, a_km, b_km, p.aligned, sm75, pair, epi_key),
                    p.arch, tag)
    return result


@functools.lru_cache(maxsize=None)
def swapped_epilogue(epilogue, n_extra):
    """``epilogue`` for a kernel computing D^T: called as ``(v, i, j, *extra)`` with the
    kernel's row i and column j, it passes D's own (j, i) on. One object per (epilogue,
    n_extra), so that the compiled kernel is found again (its key holds the id)."""
    args = "".join(f", x{k}" for k in range(n_extra))
    ns = {"epi": epilogue}
    exec(f"def swapped(v, i, j{args}):\n    return epi(v, j, i{args})\n", ns)
    return cuda.jit(device=True, inline="always")(ns["swapped"])


def _transposed(v):
    """``v`` with its last two axes exchanged (a view: the same memory and first element)."""
    return dataclasses.replace(v, shape=tuple(v.shape[:-2]) + (v.shape[-1], v.shape[-2]),
                               strides=tuple(v.strides[:-2]) + (v.strides[-1], v.strides[-2]))


def _sm90a(p, va, vb, C, D, c3, d3, alpha, beta, ext, ext_types, epilogue, epi_key, handle,
           pair):
    """The Hopper kernel: tensor maps of a and b, one persistent launch over all tiles."""
    from ..smem import device_limits
    from . import wgmma_kernel as wk
    from .wgmma_config import k_tiles

    cfg = p.tile
    kern = api._wgmma(cfg, p.kind, p.a_kmajor, p.b_kmajor, epilogue, len(ext), pair)
    maps = wk.tensor_maps(va, vb, p.a_kmajor, p.b_kmajor, cfg)  # checks them, in the simulator too
    TM = np.stack([m.bytes for m in maps])  # passed by value (wk.BY_VALUE)
    if not runner.simulated():  # the repeat-call path asks it for the maps of other arrays
        _LAST.maps = wk.MapCache(tuple((m.dtype, m.shape, m.strides, m.box) for m in maps))
    tiles_m, tiles_n = -(-p.m // cfg.bm), -(-p.n // cfg.bn)
    ntiles = tiles_m * tiles_n * p.batch
    if ntiles >= 2**32:  # the kernel's tile coordinates are 32-bit (wgmma_kernel coords)
        raise NbkernelsError(f"gemm: the sm90a kernel walks fewer than 2^32 tiles of "
                             f"{cfg.bm}x{cfg.bn}; got {ntiles} (M {p.m}, N {p.n}, batch {p.batch})")
    # the simulator runs blocks one after another: one walks every tile, or with a split tail
    # three, so that tiles are split between blocks there too
    sms = (SIM_BLOCKS_STREAMK if cfg.streamk else 1) if runner.simulated() else device_limits()[0]
    grid = (wk.streamk_grid(ntiles, sms * wk.BLOCKS_PER_SM) if cfg.streamk
            else min(ntiles, sms * wk.BLOCKS_PER_SM))
    sig = _wgmma_sig(ext_types, cfg.streamk)
    key_parts = ("wgmma", cfg.key, p.kind, p.a_kmajor, p.b_kmajor, pair, epi_key)
    if cfg.cluster > 1:  # persistent clusters, one per tile pair, as many as fit at once
        pairs = -(-tiles_m // cfg.cluster) * tiles_n * p.batch
        fit = 1 if runner.simulated() else runner.max_active_clusters(
            kern, sig, (cfg.threads, 1, 1), kern.nbk_smem_bytes, key_parts, wk.SM90A)
        grid = min(pairs, fit) * cfg.cluster
    args = [TM, C, D] + [np.int64(x) for x in (p.m, p.n, p.k, c3[1], c3[2], d3[1], d3[2], c3[0],
                                               d3[0])]
    args += [np.float32(alpha), np.float32(beta), np.int32(tiles_m), np.int32(tiles_n),
             np.int32(p.batch), np.int32(_bstride(va) != 0), np.int32(_bstride(vb) != 0)]
    if cfg.streamk:  # partial sums and one flag per consumer warp, per split tile
        split = wk.split_tail(ntiles, grid, k_tiles(p.k))
        bufs = (((split * wk.partial_floats(cfg) or 1,), np.dtype(np.float32)),
                ((split * cfg.consumers * 4 or 1,), np.dtype(np.int64)))
        _LAST.streamk = bufs  # a repeat call allocates its own (fast.Launcher)
        ws, flags = (runner.empty(va, shape, dt) for shape, dt in bufs)
        args += [runner.flat(arrays.as_view(ws, "workspace"), np.float32),
                 runner.flat(arrays.as_view(flags, "workspace"), np.int64), _nonce()]
    args.append(ext)
    _launch(kern, sig, (grid, 1, 1), cfg.threads, kern.nbk_smem_bytes, handle, args,
            key_parts, wk.SM90A, "wgmma-sk" if cfg.streamk else None)


def prebuild_sm90a(cfg, kind, a_kmajor, b_kmajor, pair):
    """Compile (or find on disk) the cubin a call with this configuration would launch, without
    launching it: lets a script build many configurations in parallel processes first."""
    from .. import launch
    from . import wgmma_kernel as wk

    kern = api._wgmma(cfg, kind, a_kmajor, b_kmajor, None, 0, pair)
    sig = _wgmma_sig(types.Tuple(()), cfg.streamk)
    parts = ("wgmma", cfg.key, kind, a_kmajor, b_kmajor, pair, None, str(sig))
    cluster = getattr(kern, "nbk_cluster", None)
    key = launch.cache_key(kern.py_func.__qualname__.split(".")[0], parts, wk.SM90A, cluster)
    launch.build(kern.py_func, sig, wk.SM90A, key, kern.nbk_launch_bounds, cluster)


def _wgmma_sig(ext_types, streamk=False):
    """Tensor maps (uint8[2, 128], passed by value: wgmma_kernel.BY_VALUE), C, D (bytes), 9
    int64 sizes/strides, alpha, beta, tiles m/n, batch, a/b batched; with stream-K the partial
    sums (float32), the flags (int64) and the call's nonce."""
    sk = (types.Array(types.float32, 1, "C"), types.Array(types.int64, 1, "C"),
          types.int64) if streamk else ()
    return (types.Array(types.uint8, 2, "C"),) + (types.Array(types.uint8, 1, "C"),) * 2 + \
        (types.int64,) * 9 + (types.float32,) * 2 + (types.int32,) * 5 + sk + (ext_types,)


#: blocks of a stream-K launch in the simulator (see _sm90a)
SIM_BLOCKS_STREAMK = 3
#: A stream-K launch's flags say "this call's partial sums are written" by holding the call's
#: nonce: the workspace comes uninitialised from the caller's allocator, and no two calls of
#: the process share a nonce (a random 63-bit start, so another process's leftovers in reused
#: memory match with probability 2**-63 per flag).
_NONCES = itertools.count(secrets.randbits(63))


def _nonce():
    return np.int64(next(_NONCES) % (1 << 63) or 1)


# Kernel signatures, as execute and _split_k pass the arguments (nbkernels compile builds the
# same ones: matmul/aot.py).
def _mma_sig(at, ext_types):
    """A, B, C, D (bytes), 13 int64 sizes/strides, alpha, beta, grid m/n, splits, kchunk."""
    return (types.Array(types.uint8, 1, "C"),) * 4 + (types.int64,) * 13 + (at, at) + \
        (types.int32, types.int32, types.int32, types.int64, ext_types)


def simt_sig(kind, ext_types):
    """A, B, C, D (elements), 15 int64 sizes/strides, alpha, beta, grid m/n."""
    nt = types.float32 if kind == "f32" else types.float64
    return (types.Array(nt, 1, "C"),) * 4 + (types.int64,) * 15 + (nt, nt) + \
        (types.int32, types.int32, ext_types)


def reduce_sig(out_kind, ext_types):
    """W, C, D (bytes), M, N, splits, 6 strides, beta."""
    rt = types.int32 if out_kind == "s32" else types.float32
    return (types.Array(types.uint8, 1, "C"),) * 3 + (types.int64,) * 2 + (types.int32,) + \
        (types.int64,) * 6 + (rt, ext_types)


def _split_k(p, va, A, B, C, D, lda, ldb, c3, d3, bst, gm, gn, alpha, beta, ext, ext_types,
             epilogue, epi_key, handle, sm75, at, cast, esz, osz):
    """Split-K: partial products of K slices into a workspace, then one reduction launch."""
    wdt = np.int32 if p.kind == "s8" else np.float32
    work = runner.empty(va, (p.batch * p.splits, p.m, p.n), wdt)
    _LAST.workspace = ((p.batch * p.splits, p.m, p.n), np.dtype(wdt))
    W = runner.flat(arrays.as_view(work, "workspace"), np.uint8)
    kern = api._mma(p.tile, p.kind, p.a_kmajor, p.b_kmajor, p.aligned, sm75, None, 0, False,
                    True)
    mn = p.m * p.n
    if p.batch * p.splits > _MAX_GRID_Y:
        raise NbkernelsError(f"gemm: batch x splits ({p.batch} x {p.splits}) exceeds the grid")
    scal = [p.m, p.n, p.k, lda, ldb, 0, 0, p.n, 1]
    # The workspace's batch stride is M*N per (batch, split) pair: blockIdx.y indexes it.
    _launch(kern, _mma_sig(at, types.Tuple(())), (gm * gn, p.batch * p.splits, 1),
            p.tile.threads, kern.nbk_smem_bytes, handle,
            [A, B, W, W] + [np.int64(x) for x in scal]
            + [np.int64(s) for s in (bst[0], bst[1], 0, mn)]
            + [cast(alpha), cast(0), np.int32(gm), np.int32(gn), np.int32(p.splits),
               np.int64(p.kchunk), ()],
            ("mma-partial", p.tile.key, p.kind, p.a_kmajor, p.b_kmajor, p.aligned, sm75, None),
            p.arch)
    out_kind = mma_kernel.OUT_KIND[p.kind]
    red = api._reduce(out_kind, epilogue, len(ext))
    threads = red.nbk_threads
    _launch(red, reduce_sig(out_kind, ext_types), (-(-mn // threads), p.batch, 1), threads, 0, handle,
            [W, C, D, np.int64(p.m), np.int64(p.n), np.int32(p.splits), np.int64(c3[1]),
             np.int64(c3[2]), np.int64(d3[1]), np.int64(d3[2]), np.int64(c3[0]),
             np.int64(d3[0]), cast(beta), ext],
            ("reduce", out_kind, epi_key), p.arch)


def _batched_launch(kern, sig, blocks, threads, smem, stream, batch, flats, flat_strides,
                    elem_strides, scalars, tail, key_parts, arch, tag=None):
    """Launch over the batch in chunks of at most 65535 (the grid's y limit).

    ``flat_strides`` are the batch strides in the units of each flat buffer (bytes for the
    tensor-core kernel's byte buffers); the kernel receives ``elem_strides`` (elements).
    """
    for b0 in range(0, batch, _MAX_GRID_Y):
        nb = min(_MAX_GRID_Y, batch - b0)
        ops = [_advance(f, b0 * s) if b0 else f for f, s in zip(flats, flat_strides)]
        args = ops + [np.int64(x) for x in scalars] + [np.int64(s) for s in elem_strides] + tail
        _launch(kern, sig, (blocks, nb, 1), threads, smem, stream, args, key_parts, arch, tag)


def _advance(buf, units):
    """``buf`` advanced by ``units`` of its own element size."""
    if isinstance(buf, runner.DeviceBuf):
        return buf.offset(units * buf.itemsize)
    return buf[units:]


def _extras(extras):
    """Epilogue extras as kernel arguments and their numba types (bf16 arrives as uint16)."""
    import numba

    vals, tys = [], []
    for i, e in enumerate(extras):
        if isinstance(e, (bool, np.bool_)):
            raise NbkernelsError(f"gemm: epilogue extra[{i}] must be an array or a number")
        if isinstance(e, (int, np.integer)):
            vals.append(np.int64(e))
            tys.append(types.int64)
        elif isinstance(e, (float, np.floating)):
            vals.append(np.float64(e))
            tys.append(types.float64)
        elif runner.simulated():
            x = np.asarray(e)
            vals.append(x)
            tys.append(numba.typeof(x))
        else:
            v = arrays.as_view(e, f"extra[{i}]")
            if v.host:
                raise NbkernelsError(f"gemm: epilogue extra[{i}] is a host array; pass it on the GPU")
            v.dtype = np.dtype(np.uint16) if v.dtype == arrays.BF16 else v.dtype
            vals.append(v)
            tys.append(types.Array(numba.from_dtype(v.dtype), v.ndim, "A"))
    return tuple(vals), types.Tuple(tuple(tys))


def _via_device(p, alpha, beta, stream, epilogue, extras):
    """NumPy inputs with a GPU present: copy in, run on the device, copy the result back."""
    def dev(view):
        if view is None:
            return None
        x = view.obj if isinstance(view.obj, np.ndarray) else np.asarray(view.obj)
        bits = x.view(np.uint16) if x.dtype == arrays.BF16 else x
        d = cuda.to_device(np.ascontiguousarray(bits))
        return d if x.dtype != arrays.BF16 else runner.DeviceView(d, declared=arrays.BF16)

    da, db, dc = dev(p.a), dev(p.b), dev(p.c)
    dext = tuple(cuda.to_device(np.ascontiguousarray(e)) if isinstance(e, np.ndarray) else e
                 for e in extras)
    batched = p.a.ndim == 3 or p.b.ndim == 3
    shape = (p.batch, p.m, p.n) if batched else (p.m, p.n)
    bits_dt = np.uint16 if p.result_dtype == arrays.BF16 else p.result_dtype
    dout = cuda.device_array(shape, bits_dt)
    if p.result_dtype == arrays.BF16:
        dout = runner.DeviceView(dout, declared=arrays.BF16)
    q = api.plan(da, db, dc, alpha=alpha, beta=beta, out=dout, variant=_forced(p),
                 precision=_precision(p.kind))
    execute(q, alpha, beta, stream, epilogue, dext)
    handle = arrays.current_stream_handle("numba", None, stream) if stream is not None else 0
    if handle:  # (copy_to_host runs on the legacy stream: it would not wait for a non-blocking one)
        cuda.external_stream(handle).synchronize()
    host = dout.copy_to_host()
    host = host.view(arrays.BF16) if p.result_dtype == arrays.BF16 else host
    if p.out is not None:
        p.out.obj[...] = host  # for a torch CPU out, obj is a NumPy view of its memory
        return p.out_user if getattr(p, "out_user", None) is not None else p.out.obj
    if p.a.framework == "torch":  # torch CPU in, torch CPU out
        import torch

        if p.result_dtype == arrays.BF16:
            return torch.from_numpy(host.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(host)
    return host


def _forced(p):
    import os

    return p.variant if os.environ.get("NBKERNELS_VARIANT") else None


def _precision(kind):
    return {"tf32": "tf32", "3xtf32": "3xtf32", "f32": "fp32"}.get(kind)

