"""GEMM speed against cuBLAS, in one process: ``python -m nbkernels.matmul.bench``.

Times with CUDA events after warm-up (host overhead lands inside the events whenever the host
is slower than the kernel: measure it separately, tools/overhead.py), takes medians, rotates among input sets larger than L2,
and measures cuBLAS (torch.matmul, and cupy.matmul where it has the dtype) on the same buffers
in the same run. FLOPs = 2*M*N*K per GEMM. Prints a table; ``--json`` saves the numbers.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

import numpy as np

SQUARE = [128, 256, 512, 1024, 2048, 4096, 8192]
LLM = [(16, 4096, 4096), (4096, 11008, 4096), (8192, 8192, 1024), (4096, 4096, 4096)]


def _time(fn, sets, reps, warmup=3):
    import cupy

    for i in range(warmup):
        fn(*sets[i % len(sets)])
    cupy.cuda.get_current_stream().synchronize()
    times = []
    for i in range(reps):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        args = sets[i % len(sets)]
        s.record()
        fn(*args)
        e.record()
        e.synchronize()
        times.append(cupy.cuda.get_elapsed_time(s, e) * 1e-3)
    return statistics.median(times), times


def _inputs(dtype, m, n, k, l2_bytes, rng):
    import cupy
    import ml_dtypes

    per = (m * k + k * n) * np.dtype(dtype).itemsize
    count = max(2, min(8, -(-3 * l2_bytes // max(per, 1))))
    sets = []
    for _ in range(count):
        if np.dtype(dtype) == np.int8:
            a = cupy.asarray(rng.integers(-64, 64, (m, k)).astype(np.int8))
            b = cupy.asarray(rng.integers(-64, 64, (k, n)).astype(np.int8))
        else:
            a = cupy.asarray(rng.standard_normal((m, k), np.float32).astype(dtype))
            b = cupy.asarray(rng.standard_normal((k, n), np.float32).astype(dtype))
        sets.append((a, b))
    return sets, ml_dtypes


def run(dtypes, shapes, variant=None, precision=None, reps=30, tile=None):
    import cupy
    import ml_dtypes
    import torch

    import nbkernels

    rng = np.random.default_rng()
    dev = cupy.cuda.Device()
    l2 = dev.attributes["L2CacheSize"]
    names = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "s8": np.int8,
             "f64": np.float64}
    rows = []
    for dt in dtypes:
        dtype = np.dtype(names[dt])
        for m, n, k in shapes:
            sets, _ = _inputs(dtype, m, n, k, l2, rng)
            rdt = np.int32 if dtype == np.int8 else dtype
            out = cupy.empty((m, n), rdt)
            kw = {"variant": variant, "tile": tile}
            if dt == "f32":
                kw["precision"] = precision
            t_nbk, _ = _time(lambda a, b: nbkernels.gemm(a, b, out=out, **kw), sets, reps)
            # correctness of the timed configuration, against float64 on the GPU
            a, b = sets[0]
            nbkernels.gemm(a, b, out=out, **kw)
            ref = cupy.asnumpy(a.astype(cupy.float64) @ b.astype(cupy.float64)) if dt != "bf16" \
                else cupy.asnumpy(a.view(cupy.uint16).astype(cupy.uint32) << 16).view(np.float32).astype(np.float64) @ \
                cupy.asnumpy(b.view(cupy.uint16).astype(cupy.uint32) << 16).view(np.float32).astype(np.float64)
            got = cupy.asnumpy(out.view(cupy.uint16).astype(cupy.uint32) << 16).view(np.float32) \
                if dt == "bf16" else cupy.asnumpy(out)
            err = float(np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))
            tsets = [(torch.from_dlpack(a), torch.from_dlpack(b)) for a, b in sets] \
                if dt != "bf16" else [(torch.from_dlpack(a.view(cupy.int16)).view(torch.bfloat16),
                                       torch.from_dlpack(b.view(cupy.int16)).view(torch.bfloat16))
                                      for a, b in sets]
            t_torch = float("nan")
            if dt != "s8":
                if dt == "f32":
                    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
                t_torch, _ = _time(lambda a, b: torch.matmul(a, b), tsets, reps)
            t_cupy = float("nan")
            if dt in ("f16", "f32", "f64", "s8"):
                try:
                    t_cupy, _ = _time(lambda a, b: cupy.matmul(a, b), sets, reps)
                except Exception:
                    pass
            fl = 2.0 * m * n * k
            best = np.nanmin([t_torch, t_cupy]) if not (np.isnan(t_torch) and np.isnan(t_cupy)) \
                else float("nan")
            rows.append({"dtype": dt, "m": m, "n": n, "k": k, "nbk_s": t_nbk,
                         "torch_s": t_torch, "cupy_s": t_cupy, "nbk_tflops": fl / t_nbk / 1e12,
                         "cublas_tflops": fl / best / 1e12, "ratio": best / t_nbk,
                         "relerr": err, "variant": variant or "auto",
                         "tile": str(tile) if tile else "heuristic"})
            r = rows[-1]
            print(f"{r['tile'][:38]:38s} {dt:5s} {m:6d}x{n:6d}x{k:6d}  nbk {r['nbk_tflops']:7.1f}  cuBLAS "
                  f"{r['cublas_tflops']:7.1f} TFLOPS  ratio {r['ratio']:.3f}  relerr {err:.1e}",
                  flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--sizes", default="4096,8192", help="square sizes, or 'sweep' or 'llm'")
    ap.add_argument("--variant")
    ap.add_argument("--precision")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tiles", help="';'-separated TileConfig fields, e.g. '128,128,64,2,2,4'")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.sizes == "sweep":
        shapes = [(s, s, s) for s in SQUARE] + LLM
    elif args.sizes == "llm":
        shapes = LLM
    else:
        shapes = [(int(s), int(s), int(s)) for s in args.sizes.split(",")]
    from .config import TileConfig

    tiles = [TileConfig(*map(int, t.split(","))) for t in args.tiles.split(";")] \
        if args.tiles else [None]
    rows = []
    for tile in tiles:
        rows += run(args.dtypes.split(","), shapes, args.variant, args.precision, args.reps, tile)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
