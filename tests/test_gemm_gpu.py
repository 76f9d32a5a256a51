"""nbkernels.gemm on a real GPU: a sweep of random shapes, strides, transposes, batches, dtypes
and frameworks against float64 references, outputs poisoned first; plus interop, streams and
the fused epilogue."""
import numpy as np
import pytest

import nbkernels

from .gemm_cases import BF16, DTYPES, TOLERANCES, make, reference, relerr, device_like
from .torch_streams import replays_on_side_stream

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

KINDS = [("float16", None), ("bfloat16", None), ("float32", "3xtf32"), ("float32", "tf32"),
         ("float32", "fp32"), ("int8", None), ("float64", None)]
SIZES = [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 97, 127, 128, 129, 191, 256, 257, 300]


def _case(seed):
    rng = np.random.default_rng(seed)
    dtype, prec = KINDS[rng.integers(len(KINDS))]
    m, n, k = (int(rng.choice(SIZES)) for _ in range(3))
    if m * n * k > 4_000_000:
        k = 64
    lay = "".join(rng.choice(list("rcst"), 2))
    batch = [(0, 0), (0, 0), (2, 2), (3, 1), (1, 2)][rng.integers(5)]
    use_c = bool(rng.integers(2))
    return dtype, prec, m, n, k, lay, batch, use_c


def _run(case, rng, **kw):
    dtype, prec, m, n, k, lay, (ba, bb), use_c = case
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    rdt = np.dtype(np.int32) if dtype == "int8" else DTYPES[dtype]
    c = None
    if use_c:
        c = (rng.integers(-50, 50, shape) if dtype == "int8" else rng.standard_normal(shape)).astype(rdt)
    alpha, beta = (3, -2) if dtype == "int8" else (1.5, -0.5)
    da, db = cupy.asarray(a), cupy.asarray(b)
    if lay[0] in "cst":  # keep the layout on the device too
        da = device_like(a)
    if lay[1] in "cst":
        db = device_like(b)
    dc = cupy.asarray(c) if c is not None else None
    out = cupy.full(shape, np.nan if rdt.kind == "f" else -7, dtype=rdt) if rdt != BF16 else \
        cupy.asarray(np.full(shape, np.nan, np.float32).astype(BF16))
    res = nbkernels.gemm(da, db, dc, alpha=alpha, beta=beta if use_c else 0, out=out,
                         precision=prec, **kw)
    assert res is out
    want = reference(a, b, c, alpha, beta if use_c else 0, prec)
    return relerr(cupy.asnumpy(out), want), TOLERANCES[(dtype, prec)]


@pytest.mark.parametrize("seed", range(240))
def test_random_sweep(seed):
    case = _case(seed)
    rng = np.random.default_rng()  # fresh values every run; the case table is fixed by seed
    (err, where), tol = _run(case, rng)
    assert err <= tol, f"case {case}: relative error {err:.3g} > {tol}; {where}"


@pytest.mark.parametrize("seed", range(40))
def test_random_sweep_wide_k_tile(seed):
    """config.WIDE_K (64 elements of K a stage, 3 stages) on the sm_80-class kernel, forced:
    the heuristic gives it only to 16-bit problems that fill the GPU with 128x128 tiles, where
    two 96 KB blocks fit an SM, so the random sweep alone would rarely reach it."""
    from nbkernels.matmul import config

    dtype, prec, m, n, k, lay, batch, use_c = _case(seed)
    dtype = ("float16", "bfloat16")[seed % 2]
    case = (dtype, None, m, n, k, lay, batch, use_c)
    rng = np.random.default_rng()
    (err, where), tol = _run(case, rng, variant="sm80", tile=config.WIDE_K)
    assert err <= tol, f"case {case}: relative error {err:.3g} > {tol}; {where}"


def test_torch_in_torch_out_bf16_and_streams():
    torch = pytest.importorskip("torch")
    a = torch.randn(130, 70, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(70, 90, device="cuda", dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        d = nbkernels.gemm(a, b)
    s.synchronize()
    assert isinstance(d, torch.Tensor) and d.dtype == torch.bfloat16 and d.shape == (130, 90)
    ref = a.double() @ b.double()
    assert ((d.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_torch_repeat_calls_run_on_the_current_stream():
    """Repeat calls (the replay path) on torch tensors launch on the caller's current stream:
    queued behind a sleep and an update of ``a`` on a side stream, each call must see the
    update (a launch on another stream would read ``a`` before it)."""
    torch = pytest.importorskip("torch")
    a = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(256, 192, device="cuda", dtype=torch.bfloat16)
    nbkernels.gemm(a, b)  # the full call that records the launch
    nbkernels.gemm(a, b, out=out)
    for d, new, _ in replays_on_side_stream(lambda o: nbkernels.gemm(a, b, out=o), a, out):
        ref = new.double() @ b.double()
        assert ((d.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_numpy_in_numpy_out():
    rng = np.random.default_rng()
    a = rng.standard_normal((65, 33)).astype(np.float16)
    b = rng.standard_normal((33, 17)).astype(np.float16)
    d = nbkernels.gemm(a, b)
    assert isinstance(d, np.ndarray) and d.dtype == np.float16
    err, where = relerr(d, reference(a, b))
    assert err < 2e-3, where


def test_fused_bias_gelu_and_residual():
    import math

    @nbkernels.gemm
    def bias_gelu(acc, i, j, bias):
        x = acc + bias[j]
        return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))

    @nbkernels.gemm
    def add_residual(acc, i, j, res, scale):
        return acc * scale + res[i, j]

    rng = np.random.default_rng()
    a = cupy.asarray(rng.standard_normal((200, 96)).astype(np.float16))
    b = cupy.asarray(rng.standard_normal((96, 150)).astype(np.float16))
    bias = cupy.asarray(rng.standard_normal(150).astype(np.float32))
    out = cupy.full((200, 150), np.nan, np.float16)
    bias_gelu(a, b, bias, out=out)
    x = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64) + cupy.asnumpy(bias)
    from math import erf
    want = 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    err, where = relerr(cupy.asnumpy(out), want)
    assert err < 3e-3, where
    res = cupy.asarray(rng.standard_normal((200, 150)).astype(np.float32))
    out2 = add_residual(a, b, res, 0.5)
    want2 = 0.5 * (cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)) + cupy.asnumpy(res)
    err, where = relerr(cupy.asnumpy(out2), want2)
    assert err < 2e-3, where


def test_misaligned_pointer_takes_the_safe_path():
    rng = np.random.default_rng()
    buf = cupy.asarray(rng.standard_normal(64 * 40 + 1).astype(np.float16))
    a = buf[1:].reshape(64, 40)  # 2-byte offset: not 16-byte aligned
    b = cupy.asarray(rng.standard_normal((40, 24)).astype(np.float16))
    assert "ordinary loads" in nbkernels.explain(a, b)
    d = nbkernels.gemm(a, b)
    err, where = relerr(cupy.asnumpy(d), reference(cupy.asnumpy(a), cupy.asnumpy(b)))
    assert err < 2e-3, where


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_repeat_calls_take_new_data_and_new_outputs(dtype):
    """The repeat-call fast path must use each call's own pointers, alpha, beta and output."""
    rng = np.random.default_rng()
    results = []
    for i in range(4):
        a = cupy.asarray(rng.standard_normal((96, 80)).astype(dtype))
        b = cupy.asarray(rng.standard_normal((80, 72)).astype(dtype))
        c = cupy.asarray(rng.standard_normal((96, 72)).astype(dtype))
        out = None if i % 2 else cupy.full((96, 72), np.nan, dtype)
        d = nbkernels.gemm(a, b, c, alpha=0.5 + i, beta=-1.0 * i, out=out)
        assert out is None or d is out
        want = reference(cupy.asnumpy(a), cupy.asnumpy(b), cupy.asnumpy(c), 0.5 + i, -1.0 * i)
        err, where = relerr(cupy.asnumpy(d), want)
        assert err < (2e-3 if dtype == "float16" else 1e-5), f"call {i}: {where}"
        results.append(d)
    assert len({int(r.data.ptr) for r in results}) == 4


@pytest.mark.parametrize("dtype,prec,which", [("bfloat16", None, "a"), ("float16", None, "b"),
                                               ("float32", "tf32", "a"), ("float64", None, "b"),
                                               ("bfloat16", None, "c")])
def test_out_sharing_memory_with_an_input(dtype, prec, which):
    """gemm(a, b, out=a) (or out=b, or c += a @ b with out=c) equals the GEMM of the inputs as
    they were, on the first call and on repeat calls after a call whose out was separate:
    blocks that store early would otherwise overwrite parts of a or b that later blocks read.
    The shapes give several waves of tiles (hundreds of tiles): with one wave (16 tiles) the
    race did not show on an H100 even without the fix (session 14, run C)."""
    rng = np.random.default_rng()
    m, n, k = {"a": (4096, 2048, 2048), "b": (2048, 4096, 2048), "c": (2048, 1536, 1024)}[which]
    dt = DTYPES[dtype]
    for i in range(3):  # a call with a separate out first: the repeat path must not replay it
        a = cupy.asarray(make(rng, dtype, (m, k)))
        b = cupy.asarray(make(rng, dtype, (k, n)))
        c = cupy.asarray(make(rng, dtype, (m, n))) if which == "c" else None
        want = reference(cupy.asnumpy(a), cupy.asnumpy(b), None if c is None else
                         cupy.asnumpy(c), 1.0, 0.0 if c is None else 1.0, prec)
        shared = i > 0
        out = {"a": a, "b": b, "c": c}[which] if shared else cupy.full((m, n), np.nan, dt)
        d = nbkernels.gemm(a, b, c, beta=0.0 if c is None else 1.0, out=out, precision=prec)
        assert d is out
        err, where = relerr(cupy.asnumpy(d), want)
        assert err <= TOLERANCES[(dtype, prec)], f"call {i} (out shared: {shared}): {where}"


@pytest.mark.parametrize("op", ["gemm", "rms_norm"])
def test_repeat_calls_from_threads_each_get_their_own_result(op):
    """Four threads repeat one recorded call (same shapes and dtypes) on their own arrays and
    streams, 40 times each: every result is the thread's own (the replay's argument blocks are
    shared, so a write + launch must not interleave with another thread's)."""
    import threading

    rng = np.random.default_rng()
    shape_a, shape_b = ((64, 96), (96, 80)) if op == "gemm" else ((8, 512), (512,))
    shape_out = (64, 80) if op == "gemm" else (8, 512)

    def run(x, w):  # into a NaN-poisoned output: an unwritten one shows
        out = cupy.full(shape_out, np.nan, np.float16)
        return nbkernels.gemm(x, w, out=out) if op == "gemm" else nbkernels.rms_norm(x, w,
                                                                                      out=out)

    def want(x, w):
        if op == "gemm":
            return x.astype(np.float64) @ w.astype(np.float64)
        x = x.astype(np.float64)
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w

    ins = [(rng.standard_normal(shape_a).astype(np.float16),
            rng.standard_normal(shape_b).astype(np.float16)) for _ in range(4)]
    run(cupy.asarray(ins[0][0]), cupy.asarray(ins[0][1]))  # record the call
    got, errors = {}, []

    def worker(t):
        try:
            x, w = (cupy.asarray(v) for v in ins[t])
            with cupy.cuda.Stream(non_blocking=True) as s:
                outs = [run(x, w) for _ in range(40)]
                s.synchronize()
            got[t] = [cupy.asnumpy(o) for o in outs]
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for t in range(4):
        ref = want(*ins[t])
        for i, o in enumerate(got[t]):
            err, where = relerr(o, ref)
            assert err < 2e-3, f"thread {t}, call {i}: {where}"


def test_autotune_measures_stores_and_is_used(tmp_path, monkeypatch):
    from nbkernels.matmul import TileConfig, tuning as at_mod

    monkeypatch.setenv("NBKERNELS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(at_mod, "_table", None)
    rng = np.random.default_rng()
    a = cupy.asarray(rng.standard_normal((512, 384)).astype(np.float16))
    b = cupy.asarray(rng.standard_normal((384, 256)).astype(np.float16))
    cands = [TileConfig(64, 64, 64, 2, 2, 4), TileConfig(128, 128, 64, 2, 2, 4)]
    # the autotuner tunes the sm80-class kernel: on Hopper, f16 runs sm90a unless forced
    kw = {"variant": "sm80"} if "sm90a" in nbkernels.explain(a, b) else {}
    best = nbkernels.autotune(a, b, candidates=cands, reps=3, progress=False, **kw)
    assert best in cands
    assert (tmp_path / "autotune.json").exists()
    assert "autotuner" in nbkernels.explain(a, b, **kw) and str(best) in nbkernels.explain(a, b, **kw)
    err, where = relerr(cupy.asnumpy(nbkernels.gemm(a, b, **kw)),
                        reference(cupy.asnumpy(a), cupy.asnumpy(b)))
    assert err < 2e-3, where


def test_split_k_repeat_calls_and_epilogue():
    """Split-K through the full path, the fast path (fresh workspace each call), and a fused
    epilogue applied in the reduction."""
    rng = np.random.default_rng()
    for i in range(3):
        a = cupy.asarray(rng.standard_normal((16, 3000)).astype(np.float16))
        b = cupy.asarray(rng.standard_normal((3000, 200)).astype(np.float16))
        c = cupy.asarray(rng.standard_normal((200,)).astype(np.float16))
        assert "split-K" in nbkernels.explain(a, b, c)
        d = nbkernels.gemm(a, b, c, alpha=1.0 + i, beta=0.5)
        want = reference(cupy.asnumpy(a), cupy.asnumpy(b), cupy.asnumpy(c), 1.0 + i, 0.5)
        err, where = relerr(cupy.asnumpy(d), want)
        assert err < 2e-3, f"call {i}: {where}"

    @nbkernels.gemm
    def relu(acc, i, j):
        return max(acc, 0.0)

    d = relu(a, b)
    want = np.maximum(reference(cupy.asnumpy(a), cupy.asnumpy(b)), 0)
    err, where = relerr(cupy.asnumpy(d), want)
    assert err < 2e-3, where


def test_torch_cpu_bf16_in_torch_cpu_out():
    torch = pytest.importorskip("torch")
    a = torch.randn(40, 24, dtype=torch.bfloat16)
    b = torch.randn(24, 16, dtype=torch.bfloat16)
    d = nbkernels.gemm(a, b)
    assert isinstance(d, torch.Tensor) and d.dtype == torch.bfloat16 and not d.is_cuda
    ref = a.double() @ b.double()
    assert ((d.double() - ref).norm() / ref.norm()).item() < 1e-2
    out = torch.full((40, 16), float("nan"), dtype=torch.bfloat16)
    assert nbkernels.gemm(a, b, out=out) is out and not torch.isnan(out).any()


def test_numba_device_arrays_with_a_strided_operand():
    from numba import cuda

    rng = np.random.default_rng()
    a = rng.standard_normal((50, 64)).astype(np.float16)
    wide = rng.standard_normal((64, 80)).astype(np.float16)
    da, dwide = cuda.to_device(a), cuda.to_device(wide)
    d = nbkernels.gemm(da, dwide[:, ::2])  # b strided: copied once to K-major
    err, where = relerr(d.copy_to_host(), reference(a, wide[:, ::2]))
    assert err < 2e-3, where


def test_numpy_bf16_in_numpy_out():
    rng = np.random.default_rng()
    a = rng.standard_normal((70, 40)).astype(BF16)
    b = rng.standard_normal((40, 30)).astype(BF16)
    d = nbkernels.gemm(a, b)
    assert isinstance(d, np.ndarray) and d.dtype == BF16
    err, where = relerr(d, reference(a, b))
    assert err < 1e-2, where


@pytest.mark.parametrize("what", ["copy", "copy, raw handle", "split-k", "numpy"])
def test_stream_argument_orders_the_calls_copies_and_temporaries(what):
    """``stream=`` a non-blocking stream held back ~20 ms by a spinning kernel, the current
    stream another: an operand copy (every other column of a wider buffer) or a split-K
    workspace must be made on that stream and come from its pool, so that allocations on the
    current stream right after the call (filled with NaN) cannot overwrite them before the
    GEMM reads them; NumPy results must be copied back after that stream's work."""
    from nbkernels.matmul import plan

    from .torch_streams import clobber_current_pool, cupy_sleep

    rng = np.random.default_rng()
    if what == "split-k":  # a 64 x 64 output, K = 8192: partial sums in a workspace
        a, b = make(rng, "bfloat16", (64, 8192)), make(rng, "bfloat16", (8192, 64))
    else:
        a = make(rng, "float16", (512, 512), "s" if what.startswith("copy") else "r")
        b = make(rng, "float16", (512, 384))
    da, db = (a, b) if what == "numpy" else (device_like(a), device_like(b))
    if what.startswith("copy"):
        assert plan(da, db).copies, "the test needs a call that copies an operand"
    if what == "split-k":
        assert plan(da, db).splits > 1, "the test needs a split-K call"
    s = cupy.cuda.Stream(non_blocking=True)
    for _ in range(2):  # the first call, then a repeat call (the fast path)
        cupy.cuda.Device().synchronize()
        cupy_sleep(s, 20)
        out = nbkernels.gemm(da, db, stream=s.ptr if what.endswith("handle") else s)
        junk = clobber_current_pool()
        s.synchronize()
        got = out if what == "numpy" else cupy.asnumpy(out)
        del junk
        dtype = "bfloat16" if what == "split-k" else "float16"
        err, where = relerr(got, reference(a, b))
        assert err <= TOLERANCES[(dtype, None)], f"{what}: {where}"


def test_stream_argument_orders_a_torch_calls_copy():
    """The same on torch tensors: a strided operand copied on a held-back torch stream, the
    caching allocator's current-stream blocks filled with NaN right after the call."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    a = torch.from_numpy(rng.standard_normal((512, 1024)).astype(np.float32)).half().cuda()[:, ::2]
    b = torch.from_numpy(rng.standard_normal((512, 384)).astype(np.float32)).half().cuda()
    want = reference(a.float().cpu().numpy().astype(np.float16), b.cpu().numpy())
    s = torch.cuda.Stream()
    for _ in range(2):
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            torch.cuda._sleep(40_000_000)  # ~20 ms
        out = nbkernels.gemm(a, b, stream=s)
        junk = [torch.full((1 << e,), float("nan"), device="cuda") for e in range(8, 23)
                for _ in range(3)]
        s.synchronize()
        del junk
        err, where = relerr(out.float().cpu().numpy(), want)
        assert err <= TOLERANCES[("float16", None)], where
