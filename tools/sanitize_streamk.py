"""One sm90a split-tail GEMM (``WgmmaConfig.streamk``): 162 tiles of 128x256 on an H100's or
H200's 132 SMs, so the last 30 are each split into two K halves (2 k-tiles each), checked
against float64; for compute-sanitizer (``tools/device_s17b.sh``). Exits non-zero on a wrong
result."""
import sys

import cupy
import numpy as np

sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr  # noqa: E402

import nbkernels  # noqa: E402
from nbkernels.matmul.wgmma_config import WgmmaConfig  # noqa: E402

rng = np.random.default_rng()
a, b = make(rng, "bfloat16", (2304, 256)), make(rng, "bfloat16", (256, 2304))
tile = WgmmaConfig(128, 256, 4, streamk=True)
plan = nbkernels.explain(cupy.asarray(a), cupy.asarray(b), variant="sm90a", tile=tile)
assert "each split into two K halves" in plan, plan
out = cupy.full((2304, 2304), np.nan, a.dtype)
nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), out=out, variant="sm90a", tile=tile)
err, where = relerr(cupy.asnumpy(out), reference(a, b))
print(f"split tail 2304x2304x256: relative error {err:.3g}")
sys.exit(0 if err <= 1e-2 else 1)
