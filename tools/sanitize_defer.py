"""sm90a GEMMs with deferred stores (``WgmmaConfig.defer``) at edge shapes, each checked
against float64; for compute-sanitizer (``tools/device_s21f.sh``): the stores of a tile's last
chunks made from shared memory during the next tile's k-loop, with no warp barrier after
their reads (the next staging's barrier orders them). Exits non-zero on a wrong result.

- the default tile at 2304x2304x128 (162 tiles on 132 SMs: blocks with a next tile; 2 k-tiles,
  one deferred chunk stored in each);
- 64x128x4e2 at 1000x2056x40: 512 tiles, one k-tile each (a pending chunk stored before the
  k-loop, the other in it), rows cut at M, a last tile column cut by N (guarded stores);
- 128x256x4ke2 at 2304x2304x256: the split tail (30 tiles in K halves) with deferred stores;
- 128x256x3d2e4 at 1200x2304x200: every chunk deferred, depth 2, rows cut at M.
"""
import sys

import cupy
import numpy as np

sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr  # noqa: E402

import nbkernels  # noqa: E402
from nbkernels.matmul import wgmma_config as wc  # noqa: E402

CASES = [(None, "bfloat16", 2304, 2304, 128),
         (wc.WgmmaConfig(64, 128, 4, defer=2), "float16", 1000, 2056, 40),
         (wc.WgmmaConfig(128, 256, 4, streamk=True, defer=2), "bfloat16", 2304, 2304, 256),
         (wc.WgmmaConfig(128, 256, 3, depth=2, defer=4), "float16", 1200, 2304, 200)]
rng = np.random.default_rng()
worst = 0.0
for tile, dtype, m, n, k in CASES:
    a, b = make(rng, dtype, (m, k)), make(rng, dtype, (k, n))
    da, db = cupy.asarray(a), cupy.asarray(b)
    plan = nbkernels.explain(da, db, variant="sm90a", tile=tile)
    assert "stay staged and are stored during the next tile's k-loop" in plan, plan
    out = cupy.full((m, n), np.nan, a.dtype)
    nbkernels.gemm(da, db, out=out, variant="sm90a", tile=tile)
    err, where = relerr(cupy.asnumpy(out), reference(a, b))
    print(f"{tile or 'default'} {dtype} {m}x{n}x{k}: relative error {err:.3g}", flush=True)
    worst = max(worst, err)
sys.exit(0 if worst <= 1e-2 else 1)
