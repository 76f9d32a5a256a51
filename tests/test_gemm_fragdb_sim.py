"""The mma.sync kernel with double-buffered fragments (TileConfig.frag_db), run by numba's
simulator at small sizes against float64 NumPy, for every kind it takes: K = 0, 1, a K tail,
several k-tiles through the ring, M/N-major 16-bit operands, batches, interior blocks, and
2 and 4 k-steps per stage. Outputs poisoned first; fresh random inputs every run.
"""
import json

import pytest

from .simrun import simulated_result

T64 = [64, 64, 64, 2, 2, 4, 8, 0, 1]  # 2 k-steps per stage (bk 64 B), 32x32 warp tiles
T64K4 = [64, 64, 128, 2, 2, 3, 8, 0, 1]  # 4 k-steps per stage (bk 128 B)
T128 = [128, 128, 64, 2, 2, 4, 8, 0, 1]  # the tile measured on the GPU (64x64 warp tiles)

CASES = [
    # dtype, (batch_a, batch_b), M, N, K, layouts (a, b), precision, tile
    ("bfloat16", (0, 0), 20, 36, 40, "rr", None, T64),
    ("float16", (0, 0), 33, 17, 50, "cc", None, T64),
    ("float16", (0, 0), 5, 7, 1, "rc", None, T64),
    ("bfloat16", (0, 0), 67, 70, 0, "rr", None, T64),
    ("bfloat16", (0, 0), 31, 29, 200, "cr", None, T64),  # 7 k-tiles through a 4-stage ring
    ("float16", (3, 1), 17, 9, 24, "rr", None, T64),
    ("float16", (0, 0), 64, 64, 128, "rc", None, T64),  # interior block, full k-tiles
    ("bfloat16", (0, 0), 40, 24, 136, "rr", None, T64K4),
    ("float16", (2, 2), 9, 10, 70, "cc", None, T64K4),
    ("bfloat16", (0, 0), 130, 72, 96, "rc", None, T128),
    ("float32", (0, 0), 19, 21, 23, "rr", "tf32", T64),
    ("float32", (0, 0), 18, 16, 72, "rc", "3xtf32", T64),
    ("int8", (0, 0), 17, 33, 130, "rr", None, T64),
]

SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES, DTYPES
import nbkernels
from nbkernels.matmul import TileConfig

out = []
rng = np.random.default_rng()
for dtype, (ba, bb), m, n, k, lay, prec, tile in json.loads(sys.argv[1]):
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
    rdt = np.int32 if dtype == "int8" else DTYPES[dtype]
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = make(rng, dtype, shape).astype(rdt) if dtype != "int8" else rng.integers(-99, 99, shape).astype(np.int32)
    res = np.full(shape, np.nan if dtype != "int8" else -7, rdt)
    alpha, beta = (2, -1) if dtype == "int8" else (0.75, 0.5)
    cfg = TileConfig(*tile)
    plan = nbkernels.explain(a, b, c, alpha=alpha, beta=beta, out=res, precision=prec, tile=cfg)
    nbkernels.gemm(a, b, c, alpha=alpha, beta=beta, out=res, precision=prec, tile=cfg)
    err, where = relerr(res, reference(a, b, c, alpha, beta, prec))
    out.append([err, where, TOLERANCES[(dtype, prec)], plan])
print("RESULT" + json.dumps(out))
'''


@pytest.fixture(scope="module")
def results():
    return simulated_result(["-c", SCRIPT, json.dumps(CASES)], timeout=2400, what="simulated GEMM")


@pytest.mark.parametrize("i", range(len(CASES)), ids=[
    f"{c[0]}-{c[1]}-{c[2]}x{c[3]}x{c[4]}-{c[5]}-{c[6]}-{c[7][0]}x{c[7][1]}x{c[7][2]}B"
    for c in CASES])
def test_double_buffered_fragments_in_simulator(results, i):
    err, where, tol, plan = results[i]
    assert "fragments double-buffered" in plan, plan
    assert err <= tol, f"{CASES[i]}: relative error {err:.3g} > {tol}; {where}\n{plan}"
