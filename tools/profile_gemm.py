"""One GEMM configuration, launched a few times, for Nsight Compute to profile the last launch.

    ncu --kernel-name regex:kernel --launch-skip 3 --launch-count 1 --set full \
        python3 tools/profile_gemm.py 4096 bf16 128,128,64,2,2,4
"""
import sys

import cupy
import ml_dtypes
import numpy as np

import nbkernels
from nbkernels.matmul import TileConfig

n = int(sys.argv[1])
dt = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}[sys.argv[2]]
tile = TileConfig(*map(int, sys.argv[3].split(","))) if len(sys.argv) > 3 else None
rng = np.random.default_rng()
a = cupy.asarray(rng.standard_normal((n, n), np.float32).astype(dt))
b = cupy.asarray(rng.standard_normal((n, n), np.float32).astype(dt))
out = cupy.empty((n, n), dt)
for _ in range(4):
    nbkernels.gemm(a, b, out=out, tile=tile, variant="sm80")
cupy.cuda.Device().synchronize()
