"""The sm90a (wgmma + TMA) GEMM on a compute-capability-9.0 GPU: a sweep of random shapes,
layouts, batches and tiles against float64 references with poisoned outputs; the fused
epilogue; repeat calls on new arrays (new tensor maps); the fall-back to the sm_80-class
variant where TMA cannot take an operand."""
import dataclasses
import math

import numpy as np
import pytest

import nbkernels
from nbkernels.matmul import wgmma_config as wc

from .conftest import GPU_CC
from .gemm_cases import BF16, DTYPES, TOLERANCES, make, reference, relerr, device_like

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(GPU_CC != (9, 0), reason="needs sm_90 (H100/H200)")]
cupy = pytest.importorskip("cupy")

# Sizes TMA can take as leading dimensions (multiples of 8 elements) for N and K; any M for
# row-major a. Large ones give more tiles than SMs (the persistent loop) and many k-tiles.
SIZES8 = [8, 16, 24, 40, 64, 72, 128, 136, 192, 256, 264, 520, 1000, 1024, 2056]
SIZES_M = [1, 3, 17, 64, 65, 127, 128, 129, 255, 300, 1000, 2049]
TILES = [None, wc.WgmmaConfig(128, 128, 6), wc.WgmmaConfig(256, 128, 4),
         wc.WgmmaConfig(256, 128, 4, 8, False, 128),
         wc.WgmmaConfig(64, 128, 4), wc.WgmmaConfig(128, 128, 6, 8, True),
         wc.WgmmaConfig(64, 256, 5, 8, True), wc.WgmmaConfig(128, 256, 4, depth=2)]


def _case(seed):
    rng = np.random.default_rng(seed)
    dtype = ["float16", "bfloat16"][rng.integers(2)]
    la, lb = rng.choice(list("rct")), rng.choice(list("rct"))
    m = int(rng.choice(SIZES8 if la != "r" else SIZES_M))  # column-major a: M is its ld
    n, k = int(rng.choice(SIZES8)), int(rng.choice(SIZES8))
    if m * n * k > 2**31:
        k = 64
    batch = [(0, 0), (0, 0), (0, 0), (2, 2), (3, 1), (1, 2)][rng.integers(6)]
    tile = int(rng.integers(len(TILES)))
    return dtype, m, n, k, la + lb, batch, bool(rng.integers(2)), tile


def _operands(rng, dtype, ba, bb, m, n, k, lay, use_c):
    """Random a (batch ``ba``, layout ``lay[0]``) and b, C when ``use_c``, the scalars that go
    with it, the result's shape and a's shape."""
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = rng.standard_normal(shape).astype(DTYPES[dtype]) if use_c else None
    alpha, beta = (1.5, -0.5) if use_c else (0.75, 0.0)
    return a, b, c, alpha, beta, shape, sa


def _poisoned(shape, dtype):
    """An output on the GPU full of NaN: an element the kernel never writes shows."""
    return cupy.asarray(np.full(shape, np.nan, np.float32).astype(DTYPES[dtype]))


def _sweep_case(seed, staged=True, tiles=None):
    """Case ``seed`` of the sweep on fresh values, with its tile (staged, the default) or that
    tile with the guarded-store epilogue; ``tiles``: the case's tile taken from these instead
    (by its index, modulo their number)."""
    dtype, m, n, k, lay, (ba, bb), use_c, tile = case = _case(seed)
    rng = np.random.default_rng()  # fresh values every run
    a, b, c, alpha, beta, shape, sa = _operands(rng, dtype, ba, bb, m, n, k, lay, use_c)
    out = _poisoned(shape, dtype)
    da, db = device_like(a), device_like(b)
    dc = cupy.asarray(c) if c is not None else None
    chosen = tiles[tile % len(tiles)] if tiles else TILES[tile]
    kw = dict(alpha=alpha, beta=beta, variant="sm90a",
              tile=chosen if staged else _guarded(chosen))
    plan = nbkernels.explain(da, db, dc, **kw)
    assert "variant: sm90a" in plan
    assert ("staged through shared memory" in plan) == staged, plan
    assert nbkernels.gemm(da, db, dc, out=out, **kw) is out
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, alpha, beta))
    assert err <= TOLERANCES[(dtype, None)], f"case {case}: relative error {err:.3g}; {where}"


@pytest.mark.parametrize("seed", range(200))
def test_random_sweep_sm90a(seed):
    _sweep_case(seed)


# The guarded-store epilogue (WgmmaConfig(staged=False): every call before session 7, kept for
# comparison; the staged default also takes it for the last tile column and beta * C): the
# sweep's first 60 cases with each tile's guarded version.
def _guarded(tile):
    return dataclasses.replace(tile or wc.DEFAULT, staged=False, defer=0)


@pytest.mark.parametrize("seed", range(60))
def test_random_sweep_sm90a_guarded_epilogue(seed):
    _sweep_case(seed, staged=False)


# The staged tiles stored by the producer's warps (offload): cooperative tiles whose ring and
# whole-tile staging fit together; the sweep's first 80 cases (beta * C and the last tile
# column take the guarded stores, the handshake with the storers still runs).
OFFLOAD_TILES = [wc.WgmmaConfig(128, 256, 3, offload=True),
                 wc.WgmmaConfig(128, 128, 4, offload=True),
                 wc.WgmmaConfig(256, 128, 3, offload=True),
                 wc.WgmmaConfig(256, 128, 3, 8, False, 128, offload=True),
                 wc.WgmmaConfig(64, 128, 4, offload=True)]


@pytest.mark.parametrize("seed", range(80))
def test_random_sweep_sm90a_offloaded_stores(seed):
    _sweep_case(seed, tiles=OFFLOAD_TILES)


# Deferred stores (WgmmaConfig.defer): the last chunks of each staged tile stored during the
# next tile's k-loop; cooperative 64-row-consumer tiles whose ring and staging fit, every chunk
# deferred on the narrow tiles; the sweep's first 80 cases (K of one k-tile: the excess chunks
# stored before the k-loop; the last tile column and beta * C keep the guarded stores).
DEFER_TILES = [wc.WgmmaConfig(128, 256, 4, defer=2), wc.WgmmaConfig(128, 128, 6, defer=2),
               wc.WgmmaConfig(256, 128, 4, defer=1), wc.WgmmaConfig(128, 256, 3, defer=3),
               wc.WgmmaConfig(64, 128, 4, defer=2), wc.WgmmaConfig(128, 256, 3, depth=2, defer=4)]


@pytest.mark.parametrize("seed", range(80))
def test_random_sweep_sm90a_deferred_stores(seed):
    _sweep_case(seed, tiles=DEFER_TILES)


def test_default_dispatch_on_hopper_is_sm90a_and_falls_back_where_tma_cannot():
    a = cupy.ones((2048, 512), BF16)
    assert "variant: sm90a" in nbkernels.explain(a, cupy.ones((512, 2048), BF16))
    few = nbkernels.explain(a[:256], cupy.ones((512, 256), BF16))  # 4 tiles, long K: split-K
    assert "variant: sm80" in few and "split" in few
    odd = nbkernels.explain(a, cupy.ones((512, 250), BF16))  # ld of b: 500 bytes
    assert "variant: sm80" in odd and "not a multiple of 16 bytes" in odd
    assert "variant: sm80" in nbkernels.explain(cupy.ones((64, 64), np.float32),
                                                cupy.ones((64, 64), np.float32), precision="tf32")
    rng = np.random.default_rng()
    x, y = make(rng, "bfloat16", (300, 512)), make(rng, "bfloat16", (512, 250))
    out = nbkernels.gemm(cupy.asarray(x), cupy.asarray(y))
    err, where = relerr(cupy.asnumpy(out), reference(x, y))
    assert err <= TOLERANCES[("bfloat16", None)], where


def test_fused_bias_gelu_and_residual_on_sm90a():
    @nbkernels.gemm
    def bias_gelu(acc, i, j, bias):
        x = acc + bias[j]
        return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))

    @nbkernels.gemm
    def add_residual(acc, i, j, res, scale):
        return acc * scale + res[i, j]

    rng = np.random.default_rng()
    a = make(rng, "float16", (300, 136))
    b = make(rng, "float16", (136, 264))
    bias = rng.standard_normal(264).astype(np.float32)
    out = cupy.full((300, 264), np.nan, np.float16)
    bias_gelu(cupy.asarray(a), cupy.asarray(b), cupy.asarray(bias), out=out, variant="sm90a")
    x = reference(a, b) + bias
    want = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    err, where = relerr(cupy.asnumpy(out), want)
    assert err < 3e-3, where
    res = rng.standard_normal((300, 264)).astype(np.float32)
    out2 = add_residual(cupy.asarray(a), cupy.asarray(b), cupy.asarray(res), 0.5, variant="sm90a")
    err, where = relerr(cupy.asnumpy(out2), 0.5 * reference(a, b) + res)
    assert err < 2e-3, where


def test_repeat_calls_on_new_arrays_use_their_own_tensor_maps():
    """The repeat-call path caches tensor maps by address: new arrays must get new maps."""
    rng = np.random.default_rng()
    outs, wants = [], []
    for i in range(5):
        x, y = make(rng, "bfloat16", (384, 256)), make(rng, "bfloat16", (256, 512))
        dx, dy = cupy.asarray(x), cupy.asarray(y)
        out = cupy.full((384, 512), np.nan, np.float32).astype(BF16)
        nbkernels.gemm(dx, dy, out=out)
        outs.append(out)
        wants.append(reference(x, y))
        if i == 2:  # the same arrays again, other values written in place
            dx[...] = cupy.asarray(make(rng, "bfloat16", (384, 256)))
            out2 = nbkernels.gemm(dx, dy)
            err, where = relerr(cupy.asnumpy(out2), reference(cupy.asnumpy(dx), y))
            assert err <= 1e-2, where
    for out, want in zip(outs, wants):
        err, where = relerr(cupy.asnumpy(out), want)
        assert err <= 1e-2, where


def test_more_array_pairs_than_the_map_cache_holds_on_a_non_blocking_stream():
    """Each launch carries its own tensor maps in its parameters: 300 array pairs (more than
    the map cache keeps, so it is cleared on the way) queued on a non-blocking stream with no
    synchronisation between calls must each get their own product (a launch reading another
    call's maps would give another pair's)."""
    from nbkernels.matmul import wgmma_kernel as wk

    assert 300 > wk.MapCache.REMEMBERED
    rng = np.random.default_rng()
    pairs, outs = [], []
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for i in range(300):
            x, y = make(rng, "bfloat16", (192, 64)), make(rng, "bfloat16", (64, 136))
            dx, dy = cupy.asarray(x), cupy.asarray(y)
            out = cupy.asarray(np.full((192, 136), np.nan, np.float32).astype(BF16))
            nbkernels.gemm(dx, dy, out=out, variant="sm90a")
            pairs.append((x, y, dx, dy))
            outs.append(out)
    stream.synchronize()
    for (x, y, _, _), out in zip(pairs, outs):
        err, where = relerr(cupy.asnumpy(out), reference(x, y))
        assert err <= 1e-2, where


def test_a_captured_cuda_graph_keeps_its_tensor_maps():
    """A CUDA graph captured around an sm90a call holds that launch's maps (they are kernel
    parameters): replayed after 300 calls on other arrays, and on new values written into the
    captured arrays, it computes the captured arrays' product."""
    rng = np.random.default_rng()
    x, y = make(rng, "bfloat16", (256, 128)), make(rng, "bfloat16", (128, 264))
    dx, dy = cupy.asarray(x), cupy.asarray(y)
    out = cupy.empty((256, 264), BF16)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        nbkernels.gemm(dx, dy, out=out, variant="sm90a")  # built and recorded: the capture
        stream.synchronize()  # below replays it (no compile, no allocation inside)
        stream.begin_capture()
        nbkernels.gemm(dx, dy, out=out, variant="sm90a")
        graph = stream.end_capture()
        keep = []
        for _ in range(300):  # other arrays, other maps
            a, b = cupy.asarray(make(rng, "bfloat16", (256, 128))), cupy.asarray(
                make(rng, "bfloat16", (128, 264)))
            keep.append(nbkernels.gemm(a, b, variant="sm90a"))
        x2 = make(rng, "bfloat16", (256, 128))
        dx[...] = cupy.asarray(x2)
        out[...] = cupy.asarray(np.full((256, 264), np.nan, np.float32).astype(BF16))
        graph.launch(stream)
    stream.synchronize()
    err, where = relerr(cupy.asnumpy(out), reference(x2, y))
    assert err <= 1e-2, where


def test_torch_bf16_and_a_transposed_weight_on_a_side_stream():
    torch = pytest.importorskip("torch")
    x = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(768, 1024, device="cuda", dtype=torch.bfloat16)  # nn.Linear weight
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = nbkernels.gemm(x, w.T)
    s.synchronize()
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16
    assert "a K-major, b K-major" in nbkernels.explain(x, w.T)
    want = x.double() @ w.double().T
    err = float((y.double() - want).norm() / want.norm())
    assert err < 1e-2


@pytest.mark.parametrize("tile", [wc.WgmmaConfig(128, 128, 6, 8, True), wc.WgmmaConfig(64, 256, 5, 8, True),
                                  wc.DEFAULT, wc.WgmmaConfig(128, 256, 3, offload=True),
                                  wc.WgmmaConfig(128, 256, 4, defer=2)], ids=str)
def test_many_tiles_per_block_and_more_k_tiles_than_stages(tile):
    """Persistent blocks with several tiles each (ping-pong consumers alternate) and k-loops
    longer than the ring: the phase bookkeeping of every barrier is exercised."""
    rng = np.random.default_rng()
    a, b = make(rng, "bfloat16", (2048, 1024)), make(rng, "bfloat16", (1024, 2312))
    out = cupy.asarray(np.full((2048, 2312), np.nan, np.float32).astype(BF16))
    nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), out=out, variant="sm90a", tile=tile)
    err, where = relerr(cupy.asnumpy(out), reference(a, b))
    assert err <= 1e-2, where


# --- clusters of two blocks sharing B (cfg.cluster == 2) ---------------------------------------
CLUSTER_TILES = {"128x256x4c2": wc.WgmmaConfig(128, 256, 4, cluster=2),
                 "128x128x6c2": wc.WgmmaConfig(128, 128, 6, cluster=2),
                 "256x128x4wc2": wc.WgmmaConfig(256, 128, 4, 8, False, 128, cluster=2),
                 "128x128x6pc2": wc.WgmmaConfig(128, 128, 6, 8, True, cluster=2),
                 "128x64x6c2": wc.WgmmaConfig(128, 64, 6, cluster=2)}

# dtype, (batch a, batch b), M, N, K, layouts, with C: odd tile-row counts (the pair's second
# tile below the matrix: loaded as zeros, not stored), M below one tile, more k-tiles than
# stages, more pairs than clusters (the ring's phases wrap), batches, both B majors.
CLUSTER_CASES = [
    ("bfloat16", (0, 0), 300, 264, 520, "rr", True),  # 3 tile rows at bm 128: odd
    ("float16", (0, 0), 64, 136, 72, "rc", False),  # M < one tile: rank 1 stores nothing
    ("bfloat16", (0, 0), 1, 1024, 264, "rr", False),
    ("float16", (3, 1), 264, 72, 136, "cr", True),  # batch: pairs never span batches; 3 tile
    # rows a batch at bm 128 (M-major a: M = 264 keeps its leading dimension 16-byte aligned)
    ("bfloat16", (2, 2), 376, 256, 1000, "tc", False),  # transposed a: M-major, M = 376
    ("float16", (0, 0), 2049, 2056, 1024, "rr", False),  # more pairs than clusters
    ("bfloat16", (0, 0), 1000, 8, 2056, "rc", True),  # N below one tile, long K
]


@pytest.mark.parametrize("tile", list(CLUSTER_TILES))
@pytest.mark.parametrize("case", range(len(CLUSTER_CASES)))
def test_cluster_configs_sm90a(tile, case):
    dtype, (ba, bb), m, n, k, lay, use_c = CLUSTER_CASES[case]
    cfg = CLUSTER_TILES[tile]
    rng = np.random.default_rng()
    a, b, c, alpha, beta, shape, sa = _operands(rng, dtype, ba, bb, m, n, k, lay, use_c)
    out = _poisoned(shape, dtype)
    da, db = device_like(a), device_like(b)
    dc = cupy.asarray(c) if c is not None else None
    kw = dict(alpha=alpha, beta=beta, variant="sm90a", tile=cfg)
    plan = nbkernels.explain(da, db, dc, **kw)
    assert "variant: sm90a" in plan and "clusters of 2x1 blocks" in plan, plan
    assert nbkernels.gemm(da, db, dc, out=out, **kw) is out
    err, where = relerr(cupy.asnumpy(out), reference(a, b, c, alpha, beta))
    assert err <= TOLERANCES[(dtype, None)], f"{tile} {CLUSTER_CASES[case]}: {err:.3g}; {where}"
    # the repeat-call path replays the cluster launch (cuLaunchKernelEx) on new values
    a2 = make(rng, dtype, sa, lay[0])
    da2 = device_like(a2)
    out2 = _poisoned(shape, dtype)
    nbkernels.gemm(da2, db, dc, out=out2, **kw)
    err, where = relerr(cupy.asnumpy(out2), reference(a2, b, c, alpha, beta))
    assert err <= TOLERANCES[(dtype, None)], f"{tile} repeat: {err:.3g}; {where}"


@pytest.mark.parametrize("tile", ["128x256x4c2", "128x128x6pc2"])
def test_fused_bias_relu_on_cluster_configs(tile):
    @nbkernels.gemm
    def bias_relu(acc, i, j, bias):
        return max(acc + bias[j], 0.0)

    rng = np.random.default_rng()
    a, b = make(rng, "bfloat16", (300, 264)), make(rng, "bfloat16", (264, 520))
    bias = rng.standard_normal(520).astype(np.float32)
    out = cupy.asarray(np.full((300, 520), np.nan, np.float32).astype(BF16))
    bias_relu(cupy.asarray(a), cupy.asarray(b), cupy.asarray(bias), out=out, variant="sm90a",
              tile=CLUSTER_TILES[tile])
    err, where = relerr(cupy.asnumpy(out), np.maximum(reference(a, b) + bias, 0))
    assert err <= TOLERANCES[("bfloat16", None)], where


def test_cluster_grid_is_what_fits_and_a_multiple_of_two():
    """The recorded launch (what repeat calls replay) carries the cluster shape, and its grid
    is whole clusters."""
    from nbkernels.matmul import fast

    rng = np.random.default_rng()
    a, b = make(rng, "bfloat16", (4096, 512)), make(rng, "bfloat16", (512, 4096))
    fast._FAST.clear()
    nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), variant="sm90a",
                   tile=CLUSTER_TILES["128x256x4c2"])
    steps = [st for lz in fast._FAST.values() for st in lz.steps]
    assert len(steps) == 1, steps
    st = steps[0]
    assert len(st.fn) == 3 and st.fn[2] == (2, 1, 1), st.fn
    assert st.grid[0] % 2 == 0 and 2 <= st.grid[0] <= 132, st.grid


# --- split tail (WgmmaConfig.streamk) ----------------------------------------------------------
SK = wc.WgmmaConfig(128, 256, 4, streamk=True)
# dtype, (batch a, batch b), M, N, K, layouts, with C, whether the tail splits on an H100's or
# H200's 132 SMs: 162, 192 and 160 tiles (tails of 30, 60 and 28), with a cut last k-tile,
# batches, a last tile column cut by N (guarded stores), beta * C, transposed a; 8 tiles (all
# split, 16 blocks); two k-tiles (one each, the second cut); tails larger than half the blocks (2048 tiles at
# 8192x8192x1024, 512 at 4096^3) and one k-tile a tile: whole tiles only.
SK_CASES = [
    ("bfloat16", (0, 0), 2304, 2304, 1000, "rr", False, True),
    ("float16", (0, 0), 3000, 2000, 200, "rc", True, True),
    ("bfloat16", (5, 5), 1000, 1000, 296, "cr", False, True),
    ("float16", (0, 0), 5000, 1000, 512, "tr", False, True),
    ("bfloat16", (0, 0), 512, 512, 1000, "rr", True, True),
    ("float16", (0, 0), 2304, 2304, 120, "rr", False, True),
    ("bfloat16", (0, 0), 8192, 8192, 1024, "rr", False, False),
    ("bfloat16", (0, 0), 4096, 4096, 64, "rr", True, False),
]


@pytest.mark.parametrize("defer", [0, 2])
@pytest.mark.parametrize("case", SK_CASES, ids=lambda c: f"{c[0]}-{c[2]}x{c[3]}x{c[4]}-{c[5]}")
def test_streamk_splits_the_last_wave_and_adds_the_partial_sums(case, defer):
    """The split tail, and with deferred stores (a staged tile's chunks stored during the next
    unit, a K half included)."""
    dtype, (ba, bb), m, n, k, lay, use_c, splits = case
    rng = np.random.default_rng()
    a, b, c, alpha, beta, shape, _ = _operands(rng, dtype, ba, bb, m, n, k, lay, use_c)
    da, db = device_like(a), device_like(b)
    dc = cupy.asarray(c) if c is not None else None
    kw = dict(alpha=alpha, beta=beta, variant="sm90a", tile=dataclasses.replace(SK, defer=defer))
    plan = nbkernels.explain(da, db, dc, **kw)
    assert ("each split into two K halves" in plan) == splits and "split tail" in plan, plan
    want = reference(a, b, c, alpha, beta)
    for _ in range(2):  # the second call's workspace may be the first's memory, flags and all
        out = _poisoned(shape, dtype)
        assert nbkernels.gemm(da, db, dc, out=out, **kw) is out
        err, where = relerr(cupy.asnumpy(out), want)
        assert err <= TOLERANCES[(dtype, None)], f"case {case}: relative error {err:.3g}; {where}"


def test_streamk_back_to_back_calls_and_a_fused_epilogue():
    """Calls queued without a synchronisation between them (each with its own workspace from
    CuPy's pool and its own nonce), then a fused bias+ReLU epilogue on split tiles."""
    rng = np.random.default_rng()
    pairs = [(make(rng, "bfloat16", (2304, 512)), make(rng, "bfloat16", (512, 2304)))
             for _ in range(4)]
    outs = [nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), variant="sm90a", tile=SK)
            for a, b in pairs]
    for (a, b), out in zip(pairs, outs):
        err, where = relerr(cupy.asnumpy(out), reference(a, b))
        assert err <= TOLERANCES[("bfloat16", None)], where

    @nbkernels.gemm
    def bias_relu(acc, i, j, bias):
        return max(acc + bias[j], 0.0)

    a, b = pairs[0]
    bias = rng.standard_normal(2304).astype(np.float32)
    out = cupy.full((2304, 2304), np.nan, BF16)
    bias_relu(cupy.asarray(a), cupy.asarray(b), cupy.asarray(bias), out=out, variant="sm90a",
              tile=SK)
    err, where = relerr(cupy.asnumpy(out), np.maximum(reference(a, b) + bias, 0))
    assert err <= TOLERANCES[("bfloat16", None)], where


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dispatch_splits_a_short_last_wave_and_repeat_calls_replay_it(dtype):
    """Without a tile argument: one tile column and as many tile rows as SMs plus 4 leave a
    last wave of 4 tiles, which the dispatch splits (K = 2048: halves of 16 k-tiles). Repeat
    calls take the recorded launch, each with a fresh workspace, flags and nonce, queued with
    no synchronisation between them; a torch call of the same shape too."""
    from nbkernels.matmul import fast
    from nbkernels.smem import device_limits

    sms = device_limits()[0]
    m, n, k = 128 * (sms + 4), 256, 2048
    rng = np.random.default_rng()
    pairs = [(make(rng, dtype, (m, k)), make(rng, dtype, (k, n))) for _ in range(4)]
    plan = nbkernels.explain(cupy.asarray(pairs[0][0]), cupy.asarray(pairs[0][1]))
    assert "variant: sm90a" in plan and f"split tail: the last 4 of {sms + 4} tiles" in plan, plan
    outs = []
    for a, b in pairs:
        out = _poisoned((m, n), dtype)
        assert nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), out=out) is out
        outs.append(out)
    replays = [lz for lz in fast._FAST.values() if lz.streamk is not None]
    assert replays, "the split-tail call left no launcher to replay"
    for (a, b), out in zip(pairs, outs):
        err, where = relerr(cupy.asnumpy(out), reference(a, b))
        assert err <= TOLERANCES[(dtype, None)], where
    torch = pytest.importorskip("torch")
    a, b = pairs[0]
    ta, tb = (torch.from_dlpack(cupy.asarray(x)) for x in (a, b))
    for _ in range(2):
        got = nbkernels.gemm(ta, tb)
        assert isinstance(got, torch.Tensor)
        err, where = relerr(got.float().cpu().numpy(), reference(a, b))
        assert err <= TOLERANCES[(dtype, None)], where
