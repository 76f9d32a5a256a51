"""float64 GEMM on the tensor cores (dmma_kernel: mma.m16n8k16/k8.f64 on sm_90+, m8n8k4 below) on a
real GPU: random shapes, strides, transposes, batches, alpha/beta/c against float64 NumPy,
outputs poisoned first; the large tiles at a size that uses them (and k-groups of 8), a fused
epilogue, the ordinary-load path, repeat calls, torch tensors and the forced SIMT variant."""
import numpy as np
import pytest

import nbkernels
from nbkernels.matmul import config as cfgmod

from .gemm_cases import make, reference, relerr, device_like

pytestmark = [pytest.mark.gpu, pytest.mark.min_cc(8, 0)]
cupy = pytest.importorskip("cupy")

TOL = 1e-12  # relative Frobenius error: DMMA rounds each product-sum like an FMA chain
SIZES = [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 97, 127, 128, 129, 191, 256, 257, 300]


def _case(seed):
    rng = np.random.default_rng(seed)
    m, n, k = (int(rng.choice(SIZES)) for _ in range(3))
    lay = "".join(rng.choice(list("rcst"), 2))
    batch = [(0, 0), (0, 0), (2, 2), (3, 1), (1, 2)][rng.integers(5)]
    return m, n, k, lay, batch, bool(rng.integers(2))


@pytest.mark.parametrize("seed", range(40))
def test_random_f64_sweep(seed):
    m, n, k, lay, (ba, bb), use_c = case = _case(seed)
    rng = np.random.default_rng()  # fresh values every run; the case table is fixed by seed
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, "float64", sa, lay[0]), make(rng, "float64", sb, lay[1])
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = rng.standard_normal(shape) if use_c else None
    beta = -0.5 if use_c else 0
    da = device_like(a) if lay[0] in "cst" else cupy.asarray(a)
    db = device_like(b) if lay[1] in "cst" else cupy.asarray(b)
    out = cupy.full(shape, np.nan)
    plan = nbkernels.explain(da, db, None if c is None else cupy.asarray(c), alpha=1.5,
                             beta=beta, out=out)
    res = nbkernels.gemm(da, db, None if c is None else cupy.asarray(c), alpha=1.5, beta=beta,
                         out=out)
    assert res is out
    assert "variant: dmma" in plan, plan
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, 1.5, beta))
    assert err <= TOL, f"case {case}: relative error {err:.3g} > {TOL}; {where}\n{plan}"


DB = cfgmod.TileConfig(128, 128, 128, 2, 4, 3, frag_db=1)  # measured by tools/device_gemm80.sh
K8 = cfgmod.TileConfig(128, 64, 128, 2, 2, 4, min_blocks=2, mma_k=8)  # mma.m16n8k8.f64
EXTRA_TILES = (DB, K8)


@pytest.mark.parametrize("tile,lay", zip(cfgmod.F64_TILES + EXTRA_TILES,
                                         ["rr", "rc", "cr", "rc", "rr", "rc"]),
                         ids=[str(t) for t in cfgmod.F64_TILES + EXTRA_TILES])
def test_each_f64_tile_at_a_size_with_edges(tile, lay):
    rng = np.random.default_rng()
    a, b = make(rng, "float64", (1000, 700), lay[0]), make(rng, "float64", (700, 1100), lay[1])
    c = rng.standard_normal((1000, 1100))
    out = cupy.full((1000, 1100), np.nan)
    da = device_like(a) if lay[0] == "c" else cupy.asarray(a)
    db = device_like(b) if lay[1] == "c" else cupy.asarray(b)
    nbkernels.gemm(da, db, cupy.asarray(c), alpha=0.5, beta=2.0, out=out, tile=tile)
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, 0.5, 2.0))
    assert err <= TOL, f"{tile} {lay}: {err:.3g}; {where}"


@pytest.mark.parametrize("lay,m", [("cr", 1000), ("cc", 1000), ("cr", 999), ("cc", 999)])
def test_m_major_a_on_the_two_per_sm_tile(lay, m):
    """The 128x64 tile's M-major a: two chunk columns a thread in the loader (cp.async; with
    an odd M, a's columns are not 16-byte aligned: predicated 8-byte loads)."""
    rng = np.random.default_rng()
    a, b = make(rng, "float64", (m, 700), lay[0]), make(rng, "float64", (700, 1100), lay[1])
    c = rng.standard_normal((m, 1100))
    out = cupy.full((m, 1100), np.nan)
    da, db = device_like(a), device_like(b) if lay[1] == "c" else cupy.asarray(b)
    tile = cfgmod.F64_TILES[0]
    plan = nbkernels.explain(da, db, tile=tile)
    assert "a M-major" in plan and ("ordinary loads" in plan) == (m % 2 == 1), plan
    nbkernels.gemm(da, db, cupy.asarray(c), alpha=0.5, beta=2.0, out=out, tile=tile)
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, 0.5, 2.0))
    assert err <= TOL, f"{tile} {lay} {m}: {err:.3g}; {where}"


def test_f64_large_default_tile_is_chosen_and_correct():
    rng = np.random.default_rng()
    a = cupy.asarray(rng.standard_normal((2048, 1536)))
    b = cupy.asarray(rng.standard_normal((1536, 2048 + 8)))
    plan = nbkernels.explain(a, b)
    assert "variant: dmma" in plan and str(cfgmod.F64_TILES[0]) in plan, plan
    d = nbkernels.gemm(a, b)
    err, where = relerr(cupy.asnumpy(d), cupy.asnumpy(a) @ cupy.asnumpy(b))
    assert err <= TOL, where


def test_f64_misaligned_pointer_takes_ordinary_loads():
    rng = np.random.default_rng()
    buf = cupy.asarray(rng.standard_normal(96 * 70 + 1))
    a = buf[1:].reshape(96, 70)  # 8-byte aligned, not 16: no cp.async
    b = cupy.asarray(rng.standard_normal((70, 40)))
    assert "ordinary loads" in nbkernels.explain(a, b)
    d = nbkernels.gemm(a, b)
    err, where = relerr(cupy.asnumpy(d), reference(cupy.asnumpy(a), cupy.asnumpy(b)))
    assert err <= TOL, where


@pytest.mark.parametrize("lay", ["rr", "cc"])
def test_f64_fused_epilogue_with_extras(lay):
    """"cc" runs as D^T = b^T a^T: the epilogue must still be given D's own i and j."""
    @nbkernels.gemm
    def scaled_bias_clip(acc, i, j, bias, top):
        return min(acc + bias[j] * i, top)

    rng = np.random.default_rng()
    a = device_like(make(rng, "float64", (150, 90), lay[0]))
    b = device_like(make(rng, "float64", (90, 130), lay[1]))
    bias = cupy.asarray(rng.standard_normal(130))
    out = cupy.full((150, 130), np.nan)
    plan = scaled_bias_clip.explain(a, b, bias, 3.0)
    assert "variant: dmma" in plan and ("b^T a^T" in plan) == (lay == "cc"), plan
    scaled_bias_clip(a, b, bias, 3.0, out=out)
    rows = np.arange(150)[:, None]
    want = np.minimum(cupy.asnumpy(a) @ cupy.asnumpy(b) + cupy.asnumpy(bias) * rows, 3.0)
    err, where = relerr(cupy.asnumpy(out), want)
    assert err <= TOL, where


@pytest.mark.parametrize("lay", ["rr", "cc"])
def test_f64_repeat_calls_take_new_data_alpha_beta_and_outputs(lay):
    """The repeat-call fast path must write each call's own pointers and float64 alpha/beta;
    "cc" runs as D^T = b^T a^T, with b's pointer in the kernel's A and a's in its B."""
    from nbkernels.matmul import fast

    rng = np.random.default_rng()
    results = []
    fast._FAST.clear()
    for i in range(4):
        a, b = make(rng, "float64", (96, 80), lay[0]), make(rng, "float64", (80, 72), lay[1])
        a, b = device_like(a), device_like(b)
        c = cupy.asarray(rng.standard_normal((96, 72)))
        out = None if i % 2 else cupy.full((96, 72), np.nan)
        alpha, beta = 0.1 + i / 3, -1.0 / (i + 3)  # not representable in float32
        d = nbkernels.gemm(a, b, c, alpha=alpha, beta=beta, out=out)
        assert out is None or d is out
        want = reference(cupy.asnumpy(a), cupy.asnumpy(b), cupy.asnumpy(c), alpha, beta)
        err, where = relerr(cupy.asnumpy(d), want)
        assert err <= TOL, f"call {i}: {where}"
        results.append(d)
    assert len({int(r.data.ptr) for r in results}) == 4
    slots = [[name for _, name in st.fields[:2]] for lz in fast._FAST.values() for st in lz.steps]
    assert slots == [["b", "a"] if lay == "cc" else ["a", "b"]] * 2, slots  # with and without out


def test_f64_torch_and_forced_simt():
    torch = pytest.importorskip("torch")
    a = torch.randn(130, 70, device="cuda", dtype=torch.float64)
    b = torch.randn(70, 90, device="cuda", dtype=torch.float64)
    ref = (a @ b).cpu().numpy()
    d = nbkernels.gemm(a, b)
    assert isinstance(d, torch.Tensor) and d.dtype == torch.float64
    err, where = relerr(d.cpu().numpy(), ref)
    assert err <= TOL, where
    assert "variant: simt" in nbkernels.explain(a, b, variant="simt")
    d = nbkernels.gemm(a, b, variant="simt")
    err, where = relerr(d.cpu().numpy(), ref)
    assert err <= TOL, where
