"""The float64 tensor-core GEMM (dmma_kernel, mma.m8n8k4.f64), run by numba's simulator at small
sizes against float64 NumPy: odd and prime shapes, K = 0 and 1, every layout, batches,
alpha/beta/c, a fused epilogue, each loader path, each f64 tile shape and double-buffered
fragments.

Runs in a child interpreter (the simulator must be enabled before numba.cuda is imported);
fresh random inputs every run; the output is poisoned with NaN first.
"""
import json

import pytest

from .simrun import simulated_result

TILES = {None: None, "128x128": [128, 128, 128, 2, 4, 3], "128x64": [128, 64, 128, 2, 2, 3],
         "64x64db": [64, 64, 128, 2, 2, 3, 8, 0, 1], "128x128db": [128, 128, 128, 2, 4, 3, 8, 0, 1]}

CASES = [
    # (batch_a, batch_b), M, N, K, layouts (a, b), tile, scale of the inputs
    ((0, 0), 20, 36, 40, "rr", None, 1.0),  # a K-major, b N-major (row-major b): cp.async
    ((0, 0), 5, 123, 123, "rc", None, 1.0),  # odd K: ordinary loads
    ((0, 0), 33, 17, 16, "cc", None, 1.0),  # a M-major
    ((0, 0), 31, 37, 41, "cr", None, 1.0),  # primes
    ((0, 0), 13, 11, 97, "rr", None, 1.0),  # 7 k-tiles through a 3-stage ring, K tail
    ((0, 0), 1, 1, 1, "rr", None, 1.0),
    ((0, 0), 17, 9, 1, "rc", None, 1.0),  # K = 1
    ((0, 0), 67, 70, 0, "rr", None, 1.0),  # K = 0: D = beta * C
    ((0, 0), 24, 18, 32, "tt", None, 1.0),  # transposed views
    ((0, 0), 19, 21, 22, "ss", None, 1.0),  # strided: copied to K-major
    ((3, 1), 17, 9, 24, "rr", None, 1.0),  # b broadcast over the batch
    ((1, 2), 9, 24, 16, "rc", None, 1.0),
    ((2, 2), 9, 10, 11, "cr", None, 1.0),
    ((0, 0), 128, 128, 64, "rr", None, 1.0),  # interior blocks, full k-tiles: no predicates
    ((0, 0), 128, 64, 48, "cc", None, 1.0),
    ((0, 0), 130, 129, 33, "rr", "128x128", 1.0),  # the large tile: 2x4 warps of 64x32
    ((0, 0), 70, 65, 48, "rc", "128x64", 1.0),
    # double-buffered fragments (frag_db=1): K tail, ring wrap, every major, both loaders
    ((0, 0), 37, 45, 83, "rr", "64x64db", 1.0),
    ((2, 1), 64, 64, 64, "cc", "64x64db", 1.0),
    ((0, 0), 29, 31, 0, "rc", "64x64db", 1.0),
    ((0, 0), 130, 129, 48, "cr", "128x128db", 1.0),
    ((0, 0), 23, 29, 31, "rr", None, 1e60),  # products near 1e120: no f32 anywhere
    ((0, 0), 23, 29, 31, "rc", None, 1e-60),  # products near 1e-120
]

SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES
import nbkernels
from nbkernels.matmul import TileConfig

cases, tiles = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rng = np.random.default_rng()
out = []
for (ba, bb), m, n, k, lay, tile, scale in cases:
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, "float64", sa, lay[0]), make(rng, "float64", sb, lay[1])
    a *= scale
    b *= scale
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = rng.standard_normal(shape) * scale * scale
    res = np.full(shape, np.nan)
    cfg = TileConfig(*tiles[str(tile)]) if tile else None
    plan = nbkernels.explain(a, b, c, alpha=0.75, beta=0.5, out=res, tile=cfg)
    nbkernels.gemm(a, b, c, alpha=0.75, beta=0.5, out=res, tile=cfg)
    err, where = relerr(res, reference(a, b, c, 0.75, 0.5))
    out.append([err, where, TOLERANCES[("float64", None)], plan])

# beta = 0 with a c given (C is not read), c broadcast from a row, a fused epilogue with an
# array and a scalar extra, and the forced SIMT variant
@nbkernels.gemm
def bias_relu(acc, i, j, bias, floor):
    return max(acc + bias[j], floor)

a, b = make(rng, "float64", (21, 35)), make(rng, "float64", (35, 26))
bias, c_row = rng.standard_normal(26), rng.standard_normal(26)
res = np.full((21, 26), np.nan)
nbkernels.gemm(a, b, np.full((21, 26), np.nan), alpha=2.0, beta=0, out=res)
out.append(list(relerr(res, reference(a, b, None, 2.0))) + [1e-12, "beta 0, NaN c"])
res = np.full((21, 26), np.nan)
nbkernels.gemm(a, b, c_row, alpha=1.0, beta=-1.5, out=res)
out.append(list(relerr(res, reference(a, b, np.broadcast_to(c_row, (21, 26)), 1.0, -1.5)))
           + [1e-12, "c broadcast"])
res = np.full((21, 26), np.nan)
bias_relu(a, b, bias, -0.25, out=res)
want = np.maximum(a @ b + bias, -0.25)
out.append(list(relerr(res, want)) + [1e-12, bias_relu.explain(a, b, bias, -0.25)])
res = np.full((21, 26), np.nan)
nbkernels.gemm(a, b, out=res, variant="simt")
out.append(list(relerr(res, reference(a, b))) + [1e-12, nbkernels.explain(a, b, variant="simt")])
print("RESULT" + json.dumps(out))
'''

EXTRA = ["beta=0 with a NaN c", "c broadcast from a row", "fused epilogue with extras",
         "forced simt variant"]


@pytest.fixture(scope="module")
def results():
    return simulated_result(["-c", SCRIPT, json.dumps(CASES), json.dumps(TILES)], timeout=2400,
                            what="simulated f64 GEMM")


@pytest.mark.parametrize("i", range(len(CASES)), ids=[
    f"{c[0]}-{c[1]}x{c[2]}x{c[3]}-{c[4]}-{c[5]}-{c[6]:g}" for c in CASES])
def test_f64_gemm_in_simulator(results, i):
    err, where, tol, plan = results[i]
    assert "variant: dmma" in plan, plan
    assert err <= tol, f"{CASES[i]}: relative error {err:.3g} > {tol}; {where}\n{plan}"


@pytest.mark.parametrize("i", range(len(EXTRA)), ids=EXTRA)
def test_f64_gemm_contract_in_simulator(results, i):
    err, where, tol, plan = results[len(CASES) + i]
    assert err <= tol, f"{EXTRA[i]}: relative error {err:.3g} > {tol}; {where}\n{plan}"
    if EXTRA[i] == "forced simt variant":
        assert "variant: simt" in plan, plan
    if EXTRA[i] == "fused epilogue with extras":
        assert "variant: dmma" in plan and "bias_relu fused" in plan, plan


def test_layout_and_loader_choices_are_what_the_cases_mean_to_cover(results):
    plans = [r[3] for r in results[:len(CASES)]]
    assert "b N-major" in plans[0] and "cp.async 16 B" in plans[0], plans[0]
    assert "ordinary loads" in plans[1], plans[1]
    assert "a M-major" in plans[2], plans[2]
    assert "copy of a" in plans[9] and "copy of b" in plans[9], plans[9]
    assert "128x128x128B tile, 2x4 warps" in plans[15], plans[15]
    assert all("fragments double-buffered" in p for p in plans[17:21]), plans[17:21]


@pytest.mark.parametrize("kmajor,rows", [(True, 128), (False, 128), (False, 64), (False, 32)])
def test_fragment_reads_match_the_swizzled_tile_and_are_bank_conflict_free(kmajor, rows):
    """Where each lane reads fragment f at k-step kk is where the loader put A[row][k] (the
    16-byte chunk swizzle), and each half-warp's 16 reads of 8 bytes hit 16 different 8-byte
    bank slots (the warp's 256 bytes in the minimum of two wavefronts)."""
    from nbkernels.matmul import dmma_kernel as dk

    bk = 16
    rowd = bk if kmajor else rows  # doubles per tile row
    for R in range(0, rows, 16):  # the warp's first row (K-major) or element (M/N-major)
        for f in range(4):
            for kk in range(bk // 4):
                idx = []
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    terms = dk.operand_terms.py_func(kmajor, rowd, R, g, t)
                    idx.append(dk.frag_index.py_func(kmajor, rowd, terms, f, kk))
                    mn, k = R + 8 * f + g, 4 * kk + t
                    row, e = (mn, k) if kmajor else (k, mn)
                    want = row * rowd + 2 * dk.swizzle.py_func(row, e // 2) + e % 2
                    assert idx[-1] == want, (R, f, kk, lane, idx[-1], want)
                for half in (idx[:16], idx[16:]):
                    slots = {i % 16 for i in half}
                    assert len(slots) == 16, (kmajor, rows, R, f, kk, sorted(i % 16 for i in half))


def _f64(m, n, k):
    import numpy as np

    rng = np.random.default_rng()
    return rng.standard_normal((m, k)), rng.standard_normal((k, n))


@pytest.mark.parametrize("arch,variant", [((8, 0), "dmma"), ((9, 0, "a"), "dmma"),
                                          ((12, 0), "dmma"), ((7, 5), "simt"), (None, "dmma")])
def test_f64_dispatch_by_compute_capability(monkeypatch, arch, variant):
    from nbkernels import Arch
    from nbkernels.matmul import api

    arch = Arch(*arch) if arch else None
    assert api._select_variant("f64", arch, None)[0] == variant
    assert api._select_variant("f64", arch, "simt")[0] == "simt"
    assert api._select_variant("f32", arch, None)[0] == "simt"  # precision="fp32" stays SIMT
    monkeypatch.setenv("NBKERNELS_VARIANT", "simt")
    assert api._select_variant("f64", arch, None)[0] == "simt"


@pytest.mark.parametrize("call,message", [
    (lambda api, a, b: api.plan(a, b, variant="sm80"),
     r"f64 runs on the dmma or simt variant, not sm80"),
    (lambda api, a, b: api.plan(a.astype("float16"), b.astype("float16"), variant="dmma"),
     r"the dmma variant computes float64 only, not f16"),
    (lambda api, a, b: api.plan(a, b, tile=api.cfgmod.TileConfig(128, 128, 64, 2, 2, 4)),
     r"cannot run f64: f64 stages 16 doubles of K \(bk_bytes 128\)"),
])
def test_f64_misuse_is_a_clear_error(call, message):
    from nbkernels import NbkernelsError
    from nbkernels.matmul import api

    a, b = _f64(40, 24, 16)
    with pytest.raises(NbkernelsError, match=message):
        call(api, a, b)


def test_forced_dmma_below_sm80_is_refused():
    from nbkernels import Arch, NbkernelsError
    from nbkernels.matmul import api

    with pytest.raises(NbkernelsError, match=r"variant dmma needs sm_80\+; this GPU is sm_75"):
        api._select_variant("f64", Arch(7, 5), "dmma")
