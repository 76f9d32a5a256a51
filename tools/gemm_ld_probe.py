"""Is the sm80-class kernel's 8192^3 loss a power-of-two leading dimension? (perf-notes v8)

    python3 tools/gemm_ld_probe.py

Times ``nbkernels.gemm`` (sm80 forced, the default tile for the size) on row-major bf16 / f16
operands whose rows are padded by PAD elements (a view ``x[:, :k]`` of a wider array, so the
leading dimension is k + PAD and the kernel reads it as it is), beside contiguous operands of
neighbouring sizes, and cupy.matmul on the same arrays. Timing as ``matmul.bench`` (CUDA
events, spin-kernel lead, medians, input sets rotated past L2). Prints one line per case.
"""
import numpy as np
import cupy

import nbkernels
from nbkernels.matmul import bench

CASES = [(8192, 0), (8192, 64), (8192, 256), (8064, 0), (8320, 0), (6144, 0), (4096, 0),
         (4096, 64)]


def padded(rng, dtype, rows, cols, pad):
    x = cupy.asarray(rng.standard_normal((rows, cols + pad), np.float32).astype(dtype))
    return x[:, :cols] if pad else x


def main():
    rng = np.random.default_rng()
    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    for dt in ("bf16", "f16"):
        dtype = bench._dtype(dt)
        for size, pad in CASES:
            per = 2 * size * size * dtype.itemsize
            count = max(2, min(6, -(-3 * l2 // per)))
            sets = [(padded(rng, dtype, size, size, pad), padded(rng, dtype, size, size, pad))
                    for _ in range(count)]
            out = cupy.empty((size, size), dtype)
            kw = {"variant": "sm80"}
            plan = nbkernels.explain(*sets[0], out=out, **kw)
            t, _ = bench._time(lambda x, y: nbkernels.gemm(x, y, out=out, **kw), sets, 20)
            tc = float("nan")
            if dt == "f16":
                tc, _ = bench._time(lambda x, y: cupy.matmul(x, y, out=out), sets, 20)
            fl = 2.0 * size ** 3
            copies = "copies" if "copy of" in plan else "no copy"
            loader = "cp.async" if "loader: cp.async" in plan else "other loader"
            print(f"{dt:5s} {size:5d}^3 ld {size + pad:5d}  nbk {fl / t / 1e12:6.1f} TFLOPS"
                  f"  cupy.matmul {fl / tc / 1e12:6.1f}"
                  f"  [{bench._compact(plan)}; {copies}; {loader}]", flush=True)


if __name__ == "__main__":
    main()
