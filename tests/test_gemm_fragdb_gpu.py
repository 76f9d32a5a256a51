"""The configurations tools/device_gemm80.sh measures, checked on a real GPU first: the mma.sync
kernel with double-buffered fragments (TileConfig.frag_db) and the 256x128 tf32 tile, at sizes
with M, N and K edges, against float64 NumPy; outputs poisoned first."""
import numpy as np
import pytest

import nbkernels
from nbkernels.matmul import TileConfig

from .gemm_cases import TOLERANCES, make, reference, relerr, device_like

pytestmark = [pytest.mark.gpu, pytest.mark.min_cc(8, 0)]
cupy = pytest.importorskip("cupy")

DB = TileConfig(128, 128, 64, 2, 2, 4, frag_db=1)  # the default 16-bit tile, double-buffered
DB_K4 = TileConfig(64, 64, 128, 2, 2, 3, frag_db=1)  # 4 k-steps per stage
TF32_256 = TileConfig(256, 128, 64, 4, 2, 3)

CASES = [
    # dtype, precision, tile, M, N, K, layouts
    ("bfloat16", None, DB, 1000, 1100, 700, "rr"),  # b N-major: ldmatrix.trans
    ("float16", None, DB, 1000, 1100, 700, "rc"),
    ("float16", None, DB, 257, 129, 4100, "cc"),  # split-K partials through the same kernel
    ("bfloat16", None, DB_K4, 300, 200, 333, "rc"),
    ("float32", "tf32", DB, 515, 260, 300, "rc"),
    ("int8", None, DB, 300, 280, 500, "rc"),
    ("float32", "tf32", TF32_256, 1000, 1100, 700, "rc"),
]


@pytest.mark.parametrize("dtype,prec,tile,m,n,k,lay", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2].bm}x{c[2].bn}x{c[2].bk_bytes}"
                              f"{'-db' if c[2].frag_db else ''}-{c[3]}x{c[4]}x{c[5]}-{c[6]}"
                              for c in CASES])
def test_measured_configurations_are_correct(dtype, prec, tile, m, n, k, lay):
    rng = np.random.default_rng()
    a, b = make(rng, dtype, (m, k), lay[0]), make(rng, dtype, (k, n), lay[1])
    rdt = np.int32 if dtype == "int8" else a.dtype
    c = (rng.integers(-50, 50, (m, n)) if dtype == "int8" else rng.standard_normal((m, n)))
    c = c.astype(rdt)
    alpha, beta = (3, -2) if dtype == "int8" else (1.5, -0.5)
    da = device_like(a) if lay[0] == "c" else cupy.asarray(a)
    db = device_like(b) if lay[1] == "c" else cupy.asarray(b)
    out = cupy.asarray(np.full((m, n), -7 if dtype == "int8" else np.nan).astype(rdt))
    kw = dict(alpha=alpha, beta=beta, out=out, precision=prec, variant="sm80", tile=tile)
    plan = nbkernels.explain(da, db, cupy.asarray(c), **kw)
    assert str(tile) in plan, plan
    nbkernels.gemm(da, db, cupy.asarray(c), **kw)
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, alpha, beta, prec))
    tol = TOLERANCES[(dtype, prec)]
    assert err <= tol, f"relative error {err:.3g} > {tol}; {where}\n{plan}"
