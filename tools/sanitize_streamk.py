"""One sm90a stream-K GEMM with split tiles (216 tiles of 128x256 on an H100's or H200's 132
SMs, 4 k-tiles each, so ranges cross tiles), checked against float64; for compute-sanitizer
(``tools/device_s16e.sh``). Exits non-zero on a wrong result."""
import sys

import cupy
import numpy as np

sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr  # noqa: E402

import nbkernels  # noqa: E402
from nbkernels.matmul.wgmma_config import WgmmaConfig  # noqa: E402

rng = np.random.default_rng()
a, b = make(rng, "bfloat16", (1536, 256)), make(rng, "bfloat16", (256, 4600))
tile = WgmmaConfig(128, 256, 4, streamk=True)
plan = nbkernels.explain(cupy.asarray(a), cupy.asarray(b), variant="sm90a", tile=tile)
assert "stream-K: " in plan and "shared out by k-tiles" in plan, plan
out = cupy.full((1536, 4600), np.nan, a.dtype)
nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), out=out, variant="sm90a", tile=tile)
err, where = relerr(cupy.asnumpy(out), reference(a, b))
print(f"stream-K 1536x4600x256: relative error {err:.3g}")
sys.exit(0 if err <= 1e-2 else 1)
