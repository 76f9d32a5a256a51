"""Where the wall time of a small row call goes (device machine): wall per call of back-to-back
rms_norm calls at 1 x 4096 and 64 x 4096 bf16 on CuPy arrays (with and without out=), an empty
CuPy RawKernel launch for scale, and a cProfile of the repeat path. Issue #5 asks for small
calls within 1.5x of an empty launch. ``python tools/host_rows.py``"""
import cProfile
import pstats
import statistics
import time

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16


def per_call(fn, calls=500):
    for _ in range(20):
        fn()
    cupy.cuda.Device().synchronize()
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        cupy.cuda.Device().synchronize()
        runs.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(runs)


rng = np.random.default_rng()
raw = cupy.RawKernel('extern "C" __global__ void nbk_empty(float* p) {}', "nbk_empty")
buf = cupy.empty(1, cupy.float32)
print(f"empty CuPy launch: {per_call(lambda: raw((1,), (32,), (buf,))):.1f} us/call")
for rows in (1, 64):
    x = cupy.asarray(rng.standard_normal((rows, 4096)).astype(BF16))
    w = cupy.asarray(rng.standard_normal(4096).astype(BF16))
    out = cupy.empty_like(x)
    print(f"rms_norm {rows}x4096 bf16: {per_call(lambda: nbkernels.rms_norm(x, w)):.1f} us/call, "
          f"out= {per_call(lambda: nbkernels.rms_norm(x, w, out=out)):.1f}")
    if rows == 1:
        y = cupy.empty_like(x)
        print(f"  cupy.empty_like alone {per_call(lambda: cupy.empty_like(y)):.1f} us/call")
prof = cProfile.Profile()
prof.enable()
for _ in range(3000):
    nbkernels.rms_norm(x, w)
cupy.cuda.Device().synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(18)
