"""Row-kernel speed against the copy bandwidth, torch eager and CuPy, in one process:
``python -m nbkernels.rows.bench [--ops ...] [--dtypes bf16,f32] [--json FILE]``.

Large sizes: device time with CUDA events after warm-up, medians, inputs rotated among sets
larger than L2. Bytes moved come from an explicit formula per op (inputs read once, outputs
written once). The ceiling is a device-to-device copy of 1 GiB timed in the same run (bytes
read + written). Small sizes (1 x 4096, 64 x 4096): wall time per call over a loop of
back-to-back calls, against an empty kernel launched through CuPy and through numba.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

from ..matmul.bench import _time as time_events

OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu")
LARGE = [(8192, 8192), (32768, 4096)]
SMALL = [(1, 4096), (64, 4096)]


def bytes_moved(op, rows, n, esz):
    """Inputs read once, outputs written once (weight/bias vectors: n elements each)."""
    big = rows * n * esz
    return {"rms_norm": 2 * big + n * esz, "rms_norm_residual": 4 * big + n * esz,
            "layer_norm": 2 * big + 2 * n * esz, "softmax": 2 * big,
            "swiglu": 3 * big}[op]


def _setup(op, rows, n, dtype, count, rng):
    import cupy

    def arr(shape):
        return cupy.asarray(rng.standard_normal(shape, np.float32).astype(dtype))

    sets = []
    for _ in range(count):
        x = arr((rows, n))
        if op in ("rms_norm", "layer_norm"):
            sets.append((x, arr((n,)), arr((n,))))
        elif op in ("rms_norm_residual", "swiglu"):
            sets.append((x, arr((rows, n)), arr((n,))))
        else:
            sets.append((x,))
    return sets


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


def copy_bandwidth(reps=20):
    """Device-to-device copy of 1 GiB: bytes read + written per second."""
    import cupy

    src = cupy.ones(1 << 28, cupy.float32)
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


def run(ops, dtypes, reps=20):
    import cupy
    import ml_dtypes

    names = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}
    rng = np.random.default_rng()
    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    bw = copy_bandwidth()
    rows_out = []
    for op in ops:
        fns = _fns(op)
        for dt in dtypes:
            dtype = np.dtype(names[dt])
            for rows, n in LARGE:
                per = bytes_moved(op, rows, n, dtype.itemsize)
                sets = _setup(op, rows, n, dtype, max(2, min(4, -(-3 * l2 // per))), rng)
                rec = {"op": op, "dtype": dt, "shape": [rows, n], "bytes": per}
                for who, fn in zip(("nbk", "torch", "cupy"), fns):
                    if fn is None:
                        continue
                    t, _ = time_events(fn, sets, reps)
                    rec[f"{who}_us"] = t * 1e6
                rec["GBps"] = per / rec["nbk_us"] * 1e-3
                rec["of_copy"] = per / rec["nbk_us"] * 1e6 / bw
                rows_out.append(rec)
                print(_line(rec), flush=True)
            for rows, n in SMALL:
                args = _setup(op, rows, n, dtype, 1, rng)[0]
                rec = {"op": op, "dtype": dt, "shape": [rows, n], "small": True,
                       "nbk_wall_us": _wall_per_call(fns[0], args) * 1e6,
                       "torch_wall_us": _wall_per_call(fns[1], args) * 1e6}
                rows_out.append(rec)
                print(_line(rec), flush=True)
    return {"copy_GBps": bw * 1e-9, "empty_launch_us": {k: v * 1e6 for k, v in
                                                         empty_launches().items()},
            "rows": rows_out}


def _line(r):
    shape = "x".join(map(str, r["shape"]))
    if r.get("small"):
        return (f"{r['op']:18s} {r['dtype']:4s} {shape:>11s}  wall/call nbk {r['nbk_wall_us']:6.1f} us"
                f"  torch {r['torch_wall_us']:6.1f} us")
    t = f"{r['op']:18s} {r['dtype']:4s} {shape:>11s}  {r['nbk_us']:8.1f} us {r['GBps']:7.0f} GB/s"
    t += f" {100 * r['of_copy']:5.1f}% of copy"
    for who in ("torch", "cupy"):
        if f"{who}_us" in r:
            t += f"  x{r[f'{who}_us'] / r['nbk_us']:.2f} vs {who}"
    return t


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m nbkernels.rows.bench", description=__doc__)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    res = run(a.ops.split(","), a.dtypes.split(","), a.reps)
    print(f"copy bandwidth {res['copy_GBps']:.0f} GB/s; empty launch wall/call: " +
          ", ".join(f"{k} {v:.1f} us" for k, v in res["empty_launch_us"].items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
