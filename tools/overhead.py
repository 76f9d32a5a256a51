"""Host wall time per nbkernels.gemm call on small CuPy arrays, beside cupy.matmul.

    python3 tools/overhead.py [size ...]

Times N back-to-back calls with a host clock and one synchronize at the end (what a Python
loop of small GEMMs costs), after warm-up. Not a test: speed lives in tools and benchmarks.
"""
import sys
import time

import cupy
import numpy as np

import nbkernels


def per_call(fn, n=2000):
    for _ in range(50):
        fn()
    cupy.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    cupy.cuda.Device().synchronize()
    return (time.perf_counter() - t) / n


for size in [int(s) for s in sys.argv[1:]] or [128]:
    rng = np.random.default_rng()
    a = cupy.asarray(rng.standard_normal((size, size)).astype(np.float16))
    b = cupy.asarray(rng.standard_normal((size, size)).astype(np.float16))
    out = cupy.empty((size, size), np.float16)
    t_out = per_call(lambda: nbkernels.gemm(a, b, out=out))
    t_new = per_call(lambda: nbkernels.gemm(a, b))
    t_cupy = per_call(lambda: cupy.matmul(a, b))
    print(f"f16 {size}^3: nbkernels.gemm(out=) {t_out * 1e6:.1f} us/call, "
          f"allocating {t_new * 1e6:.1f} us/call, cupy.matmul {t_cupy * 1e6:.1f} us/call")
