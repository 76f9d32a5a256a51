"""The float64 tensor-core GEMM (dmma_kernel), run by numba's simulator at small sizes against
float64 NumPy: odd and prime shapes, K = 0 and 1, every layout, batches, alpha/beta/c, a fused
epilogue, each loader path, each f64 tile shape and double-buffered fragments; with the
m8n8k4.f64 MMAs of sm_80 (what the simulator runs by default), and again, on the cases of
SM90_CASES, with the sm_90 shapes forced (mma.m16n8k16.f64, m16n8k8 with k-groups of 8 forced,
m16n8k4 with double-buffered fragments). Which one a compile picks for each arch is checked on
the PTX.

Runs in a child interpreter (the simulator must be enabled before numba.cuda is imported);
fresh random inputs every run; the output is poisoned with NaN first.
"""
import dataclasses
import json
import re

import pytest

from .simrun import simulated_result

TILES = {None: None, "128x128": [128, 128, 128, 2, 4, 3], "128x64": [128, 64, 128, 2, 2, 3],
         "64x64db": [64, 64, 128, 2, 2, 3, 8, 0, 1], "128x128db": [128, 128, 128, 2, 4, 3, 8, 0, 1],
         "128x64k8": [128, 64, 128, 2, 2, 3, 8, 0, 0, 8]}

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
    # k-groups of 8 forced, with either major of a
    ((0, 0), 70, 65, 41, "rc", "128x64k8", 1.0),
    ((2, 1), 33, 40, 50, "cr", "128x64k8", 1.0),
    # the 128x64 tile's M-major a: 64 chunks a row for 128 threads, two column groups a thread
    # (mma_kernel.column_groups); M edges inside one group and past it, K tails, both loaders
    ((0, 0), 136, 66, 40, "cr", "128x64", 1.0),  # cp.async: 8 rows of the second block
    ((0, 0), 197, 70, 45, "cr", "128x64", 1.0),  # odd lda: predicated 8-byte loads
    ((1, 1), 256, 64, 32, "cr", "128x64", 1.0),  # interior blocks, full k-tiles
    ((0, 0), 200, 40, 37, "tt", "128x64", 1.0),  # with a K-major b: run as b^T a^T
]

# Through the sm_90 shapes (the kernel forced to them: the simulator has no compile target):
# edges in M, N and K, K = 0 and 1, K tails, every major, batches, both tiles, double-buffered
# fragments (k-groups of 4: m16n8k4), extreme values.
SM90_CASES = [CASES[i] for i in (0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 13, 15, 16, 17, 19, 20, 21,
                                  22, 23, 24)]

SCRIPT = r'''
import functools, json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES
import nbkernels
from nbkernels.matmul import TileConfig, api, dmma_kernel

cases, tiles, sm90_cases = (json.loads(a) for a in sys.argv[1:4])
rng = np.random.default_rng()
build, built = dmma_kernel.build_kernel, []


def build_sm90(*args, **kwargs):  # the kernel with the sm_90 MMAs, whatever the target
    built.append(build(*args, mma="sm90", **kwargs))
    return built[-1]


def run(cases):
    rows = []
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
        rows.append([err, where, TOLERANCES[("float64", None)], plan])
    return rows


out = run(cases)
dmma_kernel.build_kernel = build_sm90
api._mma.cache_clear()
sm90 = run(sm90_cases)
dmma_kernel.build_kernel = build
api._mma.cache_clear()

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
# both operands transposed, fused: run as b^T a^T, the epilogue given D's own row i and column j
at, bt = make(rng, "float64", (21, 35), "c"), make(rng, "float64", (35, 26), "c")
row_bias = rng.standard_normal(21)

@nbkernels.gemm
def add_row_bias(acc, i, j, bias):
    return acc + bias[i] + 0.5 * j

res = np.full((21, 26), np.nan)
add_row_bias(at, bt, row_bias, out=res)
want = at @ bt + row_bias[:, None] + 0.5 * np.arange(26)
out.append(list(relerr(res, want)) + [1e-12, add_row_bias.explain(at, bt, row_bias)])
res = np.full((21, 26), np.nan)
nbkernels.gemm(a, b, out=res, variant="simt")
out.append(list(relerr(res, reference(a, b))) + [1e-12, nbkernels.explain(a, b, variant="simt")])
print("RESULT" + json.dumps({"cases": out, "sm90": sm90,
                             "sm90_mma": sorted({k.nbk_mma for k in built})}))
'''

EXTRA = ["beta=0 with a NaN c", "c broadcast from a row", "fused epilogue with extras",
         "fused epilogue, a and b transposed", "forced simt variant"]


@pytest.fixture(scope="module")
def results():
    return simulated_result(["-c", SCRIPT, json.dumps(CASES), json.dumps(TILES),
                             json.dumps(SM90_CASES)], timeout=2400, what="simulated f64 GEMM")


def _ids(cases):
    return [f"{c[0]}-{c[1]}x{c[2]}x{c[3]}-{c[4]}-{c[5]}-{c[6]:g}" for c in cases]


@pytest.mark.parametrize("i", range(len(CASES)), ids=_ids(CASES))
def test_f64_gemm_in_simulator(results, i):
    err, where, tol, plan = results["cases"][i]
    assert "variant: dmma" in plan, plan
    assert err <= tol, f"{CASES[i]}: relative error {err:.3g} > {tol}; {where}\n{plan}"


@pytest.mark.parametrize("i", range(len(SM90_CASES)), ids=_ids(SM90_CASES))
def test_f64_gemm_with_sm90_mma_shapes_in_simulator(results, i):
    err, where, tol, plan = results["sm90"][i]
    assert "variant: dmma" in plan, plan
    assert err <= tol, f"{SM90_CASES[i]} (sm_90 shapes): relative error {err:.3g} > {tol}; " \
        f"{where}\n{plan}"


def test_the_sm90_cases_ran_the_sm90_instructions(results):
    assert results["sm90_mma"] == ["mma.m16n8k16.f64 (forced)", "mma.m16n8k4.f64 (forced)",
                                   "mma.m16n8k8.f64 (forced)"], results["sm90_mma"]


@pytest.mark.parametrize("i", range(len(EXTRA)), ids=EXTRA)
def test_f64_gemm_contract_in_simulator(results, i):
    err, where, tol, plan = results["cases"][len(CASES) + i]
    assert err <= tol, f"{EXTRA[i]}: relative error {err:.3g} > {tol}; {where}\n{plan}"
    if EXTRA[i] == "forced simt variant":
        assert "variant: simt" in plan, plan
    if EXTRA[i] == "fused epilogue with extras":
        assert "variant: dmma" in plan and "bias_relu fused" in plan, plan
    if EXTRA[i] == "fused epilogue, a and b transposed":
        assert "a M-major, b K-major" in plan and "b^T a^T" in plan, plan


def test_layout_and_loader_choices_are_what_the_cases_mean_to_cover(results):
    plans = [r[3] for r in results["cases"][:len(CASES)]]
    assert "b N-major" in plans[0] and "cp.async 16 B" in plans[0], plans[0]
    assert "ordinary loads" in plans[1], plans[1]
    assert "a M-major" in plans[2], plans[2]
    # a M-major and b K-major: run as D^T = b^T a^T (api.plan), batched and frag_db too
    swapped = (2, 8, 14, 18, 28)
    assert all("b^T a^T" in plans[i] for i in swapped), [plans[i] for i in swapped]
    assert not any("b^T a^T" in p for i, p in enumerate(plans) if i not in swapped)
    assert "copy of a" in plans[9] and "copy of b" in plans[9], plans[9]
    assert "128x128x128B tile, 2x4 warps" in plans[15], plans[15]
    assert all("fragments double-buffered" in p for p in plans[17:21]), plans[17:21]
    assert "k-groups of 8" in plans[23] and "k-groups of 8" in plans[24], plans[23:25]
    assert all("a M-major" in p and "128x64x128B" in p for p in plans[25:29]), plans[25:29]
    assert "cp.async 16 B" in plans[25] and "ordinary loads" in plans[26], plans[25:27]
    sm90 = [r[3] for r in results["sm90"]]
    for what in ("a K-major", "a M-major", "b K-major", "b N-major", "ordinary loads",
                 "cp.async 16 B", "128x128x128B tile", "128x64x128B tile",
                 "fragments double-buffered", "k-groups of 8"):
        assert any(what in p for p in sm90), (what, sm90)


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


@pytest.mark.parametrize("kmajor,rows", [(True, 128), (False, 128), (False, 64), (False, 32)])
def test_fragment_byte_addresses_are_the_fragment_indices(kmajor, rows):
    """The loads' addresses (a per-thread base chosen by frag_slot, a constant frag_offset, the
    stage's offset) are 8 x frag_index from the operand's first byte, for every lane, fragment
    and k-quarter, in every stage."""
    from nbkernels.matmul import dmma_kernel as dk

    bk, byte0 = 16, 4096  # the operand starting 4 KB into shared memory
    rowd = bk if kmajor else rows
    for R in range(0, rows, 16):
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            terms = dk.operand_terms.py_func(kmajor, rowd, R, g, t)
            bases = dk.frag_bases.py_func(kmajor, dk.frag_seeds.py_func(kmajor, terms, byte0))
            for s_dbl in (0, 3 * 1536):
                for f in range(4):
                    for kk in range(bk // 4):
                        addr = (int(bases[dk.frag_slot.py_func(kmajor, f, kk)]) + s_dbl * 8
                                + dk.frag_offset.py_func(kmajor, rowd, f, kk))
                        want = byte0 + 8 * (s_dbl + dk.frag_index.py_func(kmajor, rowd, terms, f,
                                                                          kk))
                        assert addr == want, (kmajor, rows, R, lane, s_dbl, f, kk, addr, want)


def _dmma_ptx(arch, frag_db=0, mma="target", mma_k=0):
    from numba import types

    from nbkernels import toolchain
    from nbkernels.matmul import config, dmma_kernel, run

    tile = dataclasses.replace(config.F64_TILES[0], frag_db=frag_db, mma_k=mma_k)
    kernel = dmma_kernel.build_kernel(tile, True, False, True, mma=mma)
    return toolchain.compile_ptx_for(kernel, run._mma_sig(types.float64, types.Tuple(())), arch)


@pytest.mark.parametrize("arch,frag_db,mma_k,want", [
    ("sm_80", 0, 0, "m8n8k4"), ("sm_90", 0, 0, "m16n8k16"), ("sm_90a", 0, 0, "m16n8k16"),
    ("sm_90a", 0, 8, "m16n8k8"), ("sm_80", 0, 8, "m8n8k4"), ("sm_90a", 1, 0, "m16n8k4")])
def test_the_mma_instruction_follows_the_compile_target(arch, frag_db, mma_k, want):
    """One kernel source: the f64 shapes of sm_90 where the target has them, m8n8k4 below."""
    ptx = _dmma_ptx(arch, frag_db, mma_k=mma_k)
    shapes = set(re.findall(r"mma\.sync\.aligned\.(m\d+n\d+k\d+)\.row\.col\.f64", ptx))
    assert shapes == {want}, (arch, frag_db, mma_k, shapes)


def test_forcing_the_sm90_shapes_below_sm90_is_an_arch_error():
    from nbkernels import ArchError

    with pytest.raises(ArchError, match=r"mma_m16n8k16_f64 .* needs sm_90 or newer, but this "
                                        r"kernel is being compiled for sm_80"):
        _dmma_ptx("sm_80", mma="sm90")


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
    (lambda api, a, b: api.plan(a.astype("float16"), b.astype("float16"), variant="sm80",
                                tile=api.cfgmod.TileConfig(128, 128, 64, 2, 2, 4, mma_k=8)),
     r"cannot run f16: mma_k chooses the float64 kernel's k-group"),
    (lambda api, a, b: api.plan(a, b, tile=api.cfgmod.TileConfig(128, 64, 128, 2, 2, 4, mma_k=12)),
     r"mma_k must be 0 \(default\), 8 or 16, got 12"),
    (lambda api, a, b: api.plan(a, b, tile=api.cfgmod.TileConfig(64, 64, 128, 2, 2, 3, frag_db=1,
                                                                  mma_k=16)),
     r"double-buffered fragments use k-groups of 4; mma_k does not apply"),
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
