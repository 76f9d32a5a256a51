"""Row-kernel speed against the copy bandwidth, torch eager and CuPy, in one process:
``python -m nbkernels.rows.bench [--ops ...] [--dtypes bf16,f32] [--modes auto,0,2] [--json F]``.

Large sizes: device time with CUDA events after warm-up, each call queued behind a spin kernel
so that the host's overhead stays outside the events (``matmul.bench._time``; reported apart,
``host us``), medians, inputs rotated among sets larger than L2. Bytes moved come from an
explicit formula per op (inputs read once, outputs written once). The ceiling is a
device-to-device copy of 1 GiB timed in the same run (bytes read + written); beside it each
size is also set against a copy that moves the bytes of the op's row arrays (``of_copy_same``;
the vectors, under 0.01%, left out), which pays the same start and drain of one launch.
``--modes`` times nbkernels once per value of NBKERNELS_ROWS_LOOP on the same inputs ("auto":
unset; "0": a block per row, the layout before blocks looped over rows; "1", "2": blocks
looping with that many staging buffers). Small sizes (1 x 4096, 64 x 4096): wall time per
call over a loop of back-to-back calls, against an empty kernel launched through CuPy and
through numba.
``--host`` (no GPU needed) times the Python side of a repeat call.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import contextmanager

import numpy as np

from ..matmul.bench import _dtype as dtype_named
from ..matmul.bench import _time as time_events
from ..matmul.bench import rotation_count

OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu")
LARGE = [(8192, 8192), (32768, 4096)]
SMALL = [(1, 4096), (64, 4096)]


def bytes_moved(op, rows, n, esz):
    """Inputs read once, outputs written once (weight/bias vectors: n elements each)."""
    big = rows * n * esz
    return {"rms_norm": 2 * big + n * esz, "rms_norm_residual": 4 * big + n * esz,
            "layer_norm": 2 * big + 2 * n * esz, "softmax": 2 * big,
            "swiglu": 3 * big}[op]


class Pool:
    """Random inputs of one dtype and shape, made once and shared by every op: ``count``
    pairs of (rows, n) arrays and two vectors."""

    def __init__(self, rows, n, dtype, count, rng):
        import cupy

        def arr(shape):
            return cupy.asarray(rng.standard_normal(shape, np.float32).astype(dtype))

        self.pairs = [(arr((rows, n)), arr((rows, n))) for _ in range(count)]
        self.w, self.b = arr((n,)), arr((n,))

    @classmethod
    def rotating(cls, rows, n, dtype, rng):
        """A pool of 2-4 pairs, together three times the L2 cache where 4 suffice
        (``rotation_count``): no set is still in L2 when its turn comes round again."""
        import cupy

        l2 = cupy.cuda.Device().attributes["L2CacheSize"]
        big = rows * n * np.dtype(dtype).itemsize
        return cls(rows, n, dtype, rotation_count(2 * big, l2, most=4), rng)

    def sets(self, op):
        if op in ("rms_norm", "layer_norm"):
            return [(x, self.w, self.b) for x, _ in self.pairs]
        if op in ("rms_norm_residual", "swiglu"):
            return [(x, r, self.w) for x, r in self.pairs]
        return [(x,) for x, _ in self.pairs]


def _fns(op, eps=1e-6):
    """(nbkernels, torch eager, cupy) callables on one input set; None where not available."""
    import cupy
    import torch
    import torch.nn.functional as F

    import nbkernels

    T = torch.from_dlpack

    def cp_rms(x, w, *_):
        xf = x.astype(cupy.float32)
        return (xf * cupy.reciprocal(cupy.sqrt((xf * xf).mean(-1, keepdims=True) + eps))
                * w).astype(x.dtype)

    def cp_ln(x, w, b):
        xf = x.astype(cupy.float32)
        mu = xf.mean(-1, keepdims=True)
        return ((xf - mu) / cupy.sqrt(xf.var(-1, keepdims=True) + eps) * w + b).astype(x.dtype)

    def cp_softmax(x):
        xf = x.astype(cupy.float32)
        e = cupy.exp(xf - xf.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).astype(x.dtype)

    def cp_swiglu(g, u, _):
        gf = g.astype(cupy.float32)
        return (gf / (1 + cupy.exp(-gf)) * u).astype(g.dtype)

    return {
        "rms_norm": (lambda x, w, b: nbkernels.rms_norm(x, w, eps),
                     lambda x, w, b: F.rms_norm(T(x), (x.shape[-1],), T(w), eps), cp_rms),
        "rms_norm_residual": (lambda x, r, w: nbkernels.rms_norm(x, w, eps, residual=r),
                              lambda x, r, w: F.rms_norm(T(x) + T(r), (x.shape[-1],), T(w), eps),
                              None),
        "layer_norm": (lambda x, w, b: nbkernels.layer_norm(x, w, b, eps),
                       lambda x, w, b: F.layer_norm(T(x), (x.shape[-1],), T(w), T(b), eps),
                       cp_ln),
        "softmax": (lambda x: nbkernels.softmax(x), lambda x: F.softmax(T(x), -1), cp_softmax),
        "swiglu": (lambda g, u, _: nbkernels.swiglu(g, u), lambda g, u, _: F.silu(T(g)) * T(u),
                   cp_swiglu),
    }[op]


def copy_bandwidth(moved=2 << 30, reps=20):
    """Device-to-device copy that moves ``moved`` bytes (half read, half written; default:
    1 GiB copied, the issue's ceiling): bytes read + written per second. The large row sizes
    are all over twice the L2 cache, so no rotation is needed."""
    import cupy

    src = cupy.ones(moved // 8, cupy.float32)
    dst = cupy.empty_like(src)
    t, _ = time_events(lambda: dst.__setitem__(Ellipsis, src), [()], reps)
    return 2 * src.nbytes / t


def _wall_per_call(fn, args, calls=300):
    import cupy

    for _ in range(20):
        fn(*args)
    cupy.cuda.get_current_stream().synchronize()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        cupy.cuda.get_current_stream().synchronize()
        best.append((time.perf_counter() - t0) / calls)
    return statistics.median(best)


def empty_launches():
    """Wall time per call of an empty kernel: CuPy RawKernel (a raw cuLaunchKernel) and numba."""
    import cupy
    from numba import cuda

    raw = cupy.RawKernel('extern "C" __global__ void nbk_empty(float* p) {}', "nbk_empty")
    buf = cupy.empty(1, cupy.float32)

    @cuda.jit
    def numba_empty(p):
        pass

    return {"cupy": _wall_per_call(lambda: raw((1,), (32,), (buf,)), ()),
            "numba": _wall_per_call(lambda: numba_empty[1, 32](buf), ())}


@contextmanager
def loop_mode(mode):
    """NBKERNELS_ROWS_LOOP set to ``mode`` ("auto": unset) inside the block."""
    old = os.environ.pop("NBKERNELS_ROWS_LOOP", None)
    if mode != "auto":
        os.environ["NBKERNELS_ROWS_LOOP"] = mode
    try:
        yield
    finally:
        os.environ.pop("NBKERNELS_ROWS_LOOP", None)
        if old is not None:
            os.environ["NBKERNELS_ROWS_LOOP"] = old


def run(ops, dtypes, reps=20, modes=("auto",), json_path=None, large=LARGE):
    import cupy

    from . import host

    rng = np.random.default_rng()
    bw = copy_bandwidth()
    same = {}  # row arrays' bytes moved -> a copy of that many bytes (one launch of that size)
    rows_out = []
    for dt in dtypes:
        dtype = dtype_named(dt)
        for rows, n in large:
            pool = Pool.rotating(rows, n, dtype, rng)
            for op in ops:
                per = bytes_moved(op, rows, n, dtype.itemsize)
                fns = _fns(op)
                sets = pool.sets(op)
                rec = {"op": op, "dtype": dt, "shape": [rows, n], "bytes": per}
                for mode in modes:
                    with loop_mode(mode):
                        t, _ = time_events(fns[0], sets, reps)
                    rec[f"nbk_us[{mode}]"] = t * 1e6
                    rec[f"host_us[{mode}]"] = time_events.host_seconds * 1e6
                    rec[f"of_copy[{mode}]"] = per / t / bw
                    rec[f"plan[{mode}]"] = dict(host.LAST_PLAN)
                for who, fn in zip(("torch", "cupy"), fns[1:]):
                    if fn is not None:
                        rec[f"{who}_us"] = time_events(fn, sets, reps)[0] * 1e6
                rec["nbk_us"] = rec[f"nbk_us[{modes[0]}]"]
                rec["of_copy"] = rec[f"of_copy[{modes[0]}]"]
                rec["GBps"] = per / rec["nbk_us"] * 1e-3
                arrays = per - per % (rows * n * dtype.itemsize)  # the vectors left out
                if arrays not in same:  # one copy a size for the ops that move as many arrays
                    same[arrays] = copy_bandwidth(arrays, reps)
                rec["copy_same_GBps"] = same[arrays] * 1e-9
                rec["of_copy_same"] = per / (rec["nbk_us"] * 1e-6) / same[arrays]
                rows_out.append(rec)
                print(_line(rec, modes), flush=True)
                _save(json_path, bw, modes, rows_out)
            del pool
            cupy.get_default_memory_pool().free_all_blocks()
        for rows, n in SMALL:
            pool = Pool(rows, n, dtype, 1, rng)
            for op in ops:
                fns, args = _fns(op), pool.sets(op)[0]
                rec = {"op": op, "dtype": dt, "shape": [rows, n], "small": True,
                       "nbk_wall_us": _wall_per_call(fns[0], args) * 1e6,
                       "torch_wall_us": _wall_per_call(fns[1], args) * 1e6}
                rows_out.append(rec)
                print(_line(rec, modes), flush=True)
    res = _save(None, bw, modes, rows_out)
    res["empty_launch_us"] = {k: v * 1e6 for k, v in empty_launches().items()}
    return res


def _save(path, bw, modes, rows_out):
    """The results so far; written to ``path`` too (a run cut short keeps what it measured)."""
    res = {"copy_GBps": bw * 1e-9, "modes": list(modes), "rows": rows_out}
    if path:
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
    return res


def _line(r, modes=("auto",)):
    shape = "x".join(map(str, r["shape"]))
    head = f"{r['op']:17s} {r['dtype']:4s} {shape:>10s}"
    if r.get("small"):
        return (f"{head}  wall/call nbk {r['nbk_wall_us']:5.1f} us  torch "
                f"{r['torch_wall_us']:5.1f} us")
    t = f"{head} {r['nbk_us']:7.1f} us {100 * r['of_copy']:5.1f}% of copy"
    if "of_copy_same" in r:
        t += f" ({100 * r['of_copy_same']:5.1f}% of a copy of its bytes)"
    host = r.get(f"host_us[{modes[0]}]")
    if host is not None:
        t += f" (host {host:4.1f} us)"
    for who in ("torch", "cupy"):
        if f"{who}_us" in r:
            t += f" x{r[f'{who}_us'] / r['nbk_us']:.2f} {who}"
    for m in modes[1:]:
        t += f" | {m}: {100 * r[f'of_copy[{m}]']:5.1f}%"
    plan = r.get(f"plan[{modes[0]}]")
    if plan:
        t += (f"  [{plan['blocks']}x{plan['threads']}, {plan['buffers']} buf, "
              f"{plan['smem'] // 1024} KB, {plan['regs']} regs]")
    return t


def host_overhead(calls=20000):
    """Python time per repeat call (key, replay, allocation, launch) on fake CuPy arrays: the
    real repeat path (the generated key, the replay ``host.remember`` builds with
    ``repeat.framework_ops`` and ``launch.bind``) around a stand-in CuPy module whose
    allocator, device and stream queries and ``launchKernel`` do nothing: what the replay path
    itself costs, measurable without a GPU. Returns microseconds per call by piece."""
    import types
    from unittest import mock

    from .. import launch, repeat
    from . import host
    from .rms_norm_kernel import _KEY, rms_norm

    class Mem:
        def __init__(self, ptr):
            self.ptr, self.device_id = ptr, 0

    class Fake:  # the attributes repeat.desc reads from a CuPy array
        def __init__(self, shape, dtype, ptr):
            self.shape, self.dtype = shape, np.dtype(dtype)
            self.strides = tuple(int(np.prod(shape[i + 1:])) * self.dtype.itemsize
                                 for i in range(len(shape)))
            self.data = Mem(ptr)

    x, w = Fake((64, 4096), np.float32, 1 << 20), Fake((4096,), np.float32, 1 << 24)
    out, stream = Fake((64, 4096), np.float32, 1 << 28), Mem(0)
    cupy = types.SimpleNamespace(ndarray=lambda shape, dtype: out, cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: 0), Device=None,
        get_current_stream=lambda: stream))
    packed = launch.PackedArgs([0] * 60 + [0.0], [launch.VOIDP] * 60 + [launch.F32])

    class Call:  # what a recorded call leaves behind
        launches = [((None, 0x1234), (264, 1, 1), (256, 1, 1), 49152, packed,
                     [(4, "x"), (20, "weight"), (32, "out"), (60, "eps")])]
        allocs = [("out", (64, 4096), np.dtype(np.float32))]
        sim, replayable = False, True

    args = (x, w, None, None, None)
    res = {}
    with repeat.read_as_cupy(Fake), mock.patch.dict(repeat._mods, {"cupy": cupy}), \
            mock.patch.dict(repeat._OPS, clear=True), mock.patch.dict(host._FAST, clear=True), \
            mock.patch.object(launch, "_cupy_launch_kernel", lambda: lambda *a: None):
        key, ptrs = _KEY(args, (float, None))
        host.remember(key, Call(), ("out",), *host.by_name(_KEY, args, ptrs),
                      scalars=_KEY.scalars)
        rep = host._FAST[key]
        for name, fn in [
            ("key", lambda: _KEY(args, (float, None))),
            ("replay", lambda: rep.fire(args, ptrs, (1e-6,), None)),
            ("rms_norm call", lambda: rms_norm(x, w)),
        ]:
            for _ in range(1000):
                fn()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            res[name] = (time.perf_counter() - t0) / calls * 1e6
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m nbkernels.rows.bench", description=__doc__)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--modes", default="auto",
                    help="NBKERNELS_ROWS_LOOP values to time nbkernels under, the first "
                         "reported as the result (auto: unset)")
    ap.add_argument("--host", action="store_true",
                    help="only the Python cost of a repeat call, on fake arrays (no GPU)")
    ap.add_argument("--json")
    ap.add_argument("--sizes", default=",".join(f"{r}x{n}" for r, n in LARGE),
                    help="the large sizes, rows x n, comma-separated (default: the issue's "
                         "two; model widths such as 16384x5120 beside them)")
    a = ap.parse_args(argv)
    if a.host:
        res = host_overhead()
        print("; ".join(f"{k} {v:.2f} us" for k, v in res.items()))
    else:
        large = [s.split("x") for s in a.sizes.split(",")]
        if not all(len(s) == 2 and all(v.isdigit() and int(v) > 0 for v in s) for s in large):
            ap.error(f"--sizes: expected rows x n pairs such as 8192x8192,16384x5120, got "
                     f"{a.sizes!r}")
        res = run(a.ops.split(","), a.dtypes.split(","), a.reps, tuple(a.modes.split(",")),
                  a.json, [(int(r), int(n)) for r, n in large])
        print(f"copy bandwidth {res['copy_GBps']:.0f} GB/s; empty launch wall/call: " +
              ", ".join(f"{k} {v:.1f} us" for k, v in res["empty_launch_us"].items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
