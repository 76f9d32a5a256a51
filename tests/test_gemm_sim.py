"""The real GEMM kernels, run by numba's simulator at small sizes, against float64 NumPy.

Runs in a child interpreter (the simulator must be enabled before numba.cuda is imported);
fresh random inputs every run; the output is poisoned with NaN (or a sentinel) first.
"""
import json

import pytest

from .simrun import simulated_result

CASES = [
    # dtype, (batch_a, batch_b), M, N, K, layouts (a, b), precision, variant[, tile]
    ("bfloat16", (0, 0), 20, 36, 40, "rr", None, None),
    ("float16", (0, 0), 33, 17, 50, "cc", None, None),
    ("float16", (0, 0), 16, 8, 16, "rc", None, None),
    ("bfloat16", (0, 0), 5, 7, 3, "cr", None, None),
    ("float16", (0, 0), 1, 1, 1, "rr", None, None),
    ("bfloat16", (0, 0), 67, 70, 0, "rr", None, None),
    ("float16", (3, 1), 17, 9, 24, "rr", None, None),
    ("bfloat16", (1, 2), 9, 24, 16, "rs", None, None),
    ("float16", (0, 0), 24, 16, 40, "rr", None, "sm75"),
    ("float32", (0, 0), 19, 21, 23, "rr", "3xtf32", None),
    ("float32", (0, 0), 18, 16, 32, "rc", "tf32", None),
    ("float32", (0, 0), 13, 11, 9, "cs", "fp32", None),
    ("int8", (0, 0), 17, 33, 70, "rr", None, None),
    ("int8", (0, 0), 32, 16, 64, "rc", None, None),
    ("float64", (2, 2), 9, 10, 11, "rc", None, None),
    # interior blocks (whole 64x64 tiles and full k-tiles): the predicate-free loader
    ("bfloat16", (0, 0), 130, 72, 96, "rr", None, None),
    ("float16", (0, 0), 64, 64, 64, "cc", None, None),
    # the large 16-bit tiles (TileConfig fields): Hopper's config.WIDE_K (64 elements of K a
    # stage, 3 stages; 4 full k-tiles, then edges in M, N and K), and A100's 64-byte tile
    ("bfloat16", (0, 0), 128, 128, 256, "rr", None, None, [128, 128, 128, 2, 2, 3, 8, 2]),
    ("float16", (0, 0), 130, 72, 200, "cr", None, None, [128, 128, 128, 2, 2, 3, 8, 2]),
    ("float16", (0, 0), 70, 40, 200, "rc", None, None, [128, 128, 64, 2, 2, 4]),
    # two column groups a thread (mma_kernel.column_groups): the tf32 tile's M-major a (64
    # chunks a row, 256 threads) and a 128-thread tile's N-major b; edges inside the second
    # group, K tails
    ("float32", (0, 0), 40, 36, 40, "cr", "tf32", None, [256, 128, 64, 4, 2, 3]),
    ("float32", (0, 0), 70, 100, 40, "rr", "tf32", None, [128, 128, 64, 2, 2, 4]),
    # split-K (few output tiles, long K): partial slices plus the reduction kernel
    ("bfloat16", (0, 0), 20, 36, 300, "rc", None, None),
    ("float16", (2, 2), 9, 17, 270, "rr", None, None),
    ("float32", (0, 0), 19, 21, 200, "rr", "tf32", None),
    ("int8", (0, 0), 7, 12, 600, "rr", None, None),
]

SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES, DTYPES
import nbkernels
from nbkernels.matmul import TileConfig

cases = json.loads(sys.argv[1])
rng = np.random.default_rng()
out = []
for dtype, (ba, bb), m, n, k, lay, prec, variant, *tile in cases:
    tile = TileConfig(*tile[0]) if tile else None
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
    rdt = np.int32 if dtype == "int8" else DTYPES[dtype]
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = make(rng, dtype, shape).astype(rdt) if dtype != "int8" else rng.integers(-99, 99, shape).astype(np.int32)
    res = np.full(shape, np.nan if dtype != "int8" else -7, rdt)
    alpha, beta = (2, -1) if dtype == "int8" else (0.75, 0.5)
    nbkernels.gemm(a, b, c, alpha=alpha, beta=beta, out=res, precision=prec, variant=variant,
                   tile=tile)
    err, where = relerr(res, reference(a, b, c, alpha, beta, prec))
    out.append([err, where, TOLERANCES[(dtype, prec)]])
print("RESULT" + json.dumps(out))
'''


@pytest.fixture(scope="module")
def results():
    return simulated_result(["-c", SCRIPT, json.dumps(CASES)], timeout=2400, what="simulated GEMM")


@pytest.mark.parametrize("i", range(len(CASES)), ids=[
    f"{c[0]}-{c[1]}-{c[2]}x{c[3]}x{c[4]}-{c[5]}-{c[6]}-{c[7]}" for c in CASES])
def test_gemm_in_simulator(results, i):
    err, where, tol = results[i]
    assert err <= tol, f"{CASES[i]}: relative error {err:.3g} > {tol}; {where}"


ALIAS_SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES
import nbkernels

rng = np.random.default_rng()
out = []
for dtype, m, n, k, prec, which in json.loads(sys.argv[1]):
    a, b = make(rng, dtype, (m, k)), make(rng, dtype, (k, n))
    a0, b0 = a.copy(), b.copy()
    if which == "a":  # gemm(a, b, out=a): a is read by later blocks after earlier ones store
        want = reference(a0, b0, precision=prec)
        got = nbkernels.gemm(a, b, out=a, precision=prec)
        ok = got is a
    elif which == "b":
        want = reference(a0, b0, precision=prec)
        got = nbkernels.gemm(a, b, out=b, precision=prec)
        ok = got is b
    else:  # c += a @ b in place: out is c itself
        c = make(rng, dtype, (m, n))
        want = reference(a0, b0, c.copy(), 1.0, 1.0, prec)
        got = nbkernels.gemm(a, b, c, beta=1.0, out=c, precision=prec)
        ok = got is c
    err, where = relerr(got, want)
    out.append([err, where, TOLERANCES[(dtype, prec)], ok])
print("RESULT" + json.dumps(out))
'''

# The copy path of an input that shares memory with out: the copied operand is K-major, the
# result lands in out and is the out object. (The simulator hands each kernel argument over as
# its own copy, so the race the copy prevents cannot show here: the plan tests in
# test_gemm_errors.py and the GPU test in test_gemm_gpu.py cover that.)
ALIAS_CASES = [("float16", 16, 160, 160, None, "a"), ("float16", 160, 24, 160, None, "b"),
               ("float32", 9, 70, 70, "fp32", "a"), ("bfloat16", 40, 72, 96, None, "c")]


def test_out_sharing_memory_with_an_input_in_simulator():
    res = simulated_result(["-c", ALIAS_SCRIPT, json.dumps(ALIAS_CASES)], timeout=1200,
                           what="simulated GEMM with out aliasing an input")
    for case, (err, where, tol, same) in zip(ALIAS_CASES, res):
        assert same, f"{case}: the result is not the out array passed"
        assert err <= tol, f"{case}: relative error {err:.3g} > {tol}; {where}"


@pytest.mark.parametrize("rows,cpr,nt,period,want", [
    (16, 64, 128, 4, 2),   # f64 128x64 tile, M-major a
    (128, 8, 128, 4, 1),   # f64, K-major a
    (16, 32, 128, 4, 1),   # f64, N-major b of 64
    (16, 64, 256, 8, 2),   # tf32 256x128 tile, M-major a
    (16, 32, 128, 8, 2),   # tf32 128-thread tile, N-major b of 128
    (64, 16, 128, 8, 1),   # 16-bit WIDE_K, N-major b
    (8, 4, 128, 8, 0),     # no split: the general loader
])
def test_fast_loader_chunks_cover_the_tile_once_at_constant_offsets(rows, cpr, nt, period, want):
    """Each thread's chunks (setup's first chunk, then row steps and column groups) cover the
    swizzled tile exactly once, at constant offsets from the first: what _fast_loader assumes."""
    from nbkernels.matmul import dmma_kernel, mma_kernel

    cg = mma_kernel.column_groups(rows, cpr, nt, period)
    assert cg == want
    if not cg:
        return
    swz = dmma_kernel.swizzle.py_func if period == 4 else mma_kernel._swizzle(cpr).py_func
    span = cpr // cg
    rstep = nt // span
    seen = set()
    for tid in range(nt):
        row0, ch = tid // span, tid % span
        first = row0 * cpr * 16 + swz(row0, ch) * 16
        for it in range(rows * cpr // nt):
            row, col = row0 + (it // cg) * rstep, ch + (it % cg) * span
            off = row * cpr * 16 + swz(row, col) * 16
            assert off == first + (it // cg) * rstep * cpr * 16 + (it % cg) * span * 16
            seen.add(off)
    assert len(seen) == rows * cpr
