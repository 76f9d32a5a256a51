"""Arrays on a GPU other than the current one (needs two GPUs; skipped otherwise).

A call runs on the arrays' GPU, whatever device the caller has current, as torch's own ops
do: the full path and the repeat path (a replay recorded on one device, repeated while
another is current), gemm (each variant the device dispatches, the forced sm80-class one,
a fused epilogue) and the row kernels, CuPy and torch. The caller's current device is the
same after the call. A stream of another GPU than the arrays', and arrays on two GPUs, are
refused with a typed error, ``out`` untouched. References in float64 from the NumPy inputs,
outputs NaN-poisoned before each call."""
import numpy as np
import pytest

import nbkernels
from nbkernels.errors import NbkernelsError

from . import row_cases
from .gemm_cases import BF16, TOLERANCES, reference, relerr

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


def _gpus():
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return 0


if _gpus() < 2:
    pytest.skip("needs two GPUs", allow_module_level=True)

GEMM_KINDS = [("bfloat16", None, None), ("float16", None, None), ("float16", None, "sm80"),
              ("float32", "3xtf32", None), ("int8", None, None)]


def _operands(rng, dtype, m, n, k):
    if dtype == "int8":
        return (rng.integers(-128, 128, (m, k)).astype(np.int8),
                rng.integers(-128, 128, (k, n)).astype(np.int8))
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    return (rng.standard_normal((m, k)).astype(dt), rng.standard_normal((k, n)).astype(dt))


def _poisoned(shape, dtype, device):
    rdt = np.dtype(np.int32) if dtype == "int8" else (BF16 if dtype == "bfloat16"
                                                       else np.dtype(dtype))
    host = np.full(shape, -7 if rdt.kind == "i" else np.nan, np.float32).astype(rdt)
    with cupy.cuda.Device(device):
        return cupy.asarray(host)


@pytest.mark.parametrize("dtype,precision,variant", GEMM_KINDS)
def test_gemm_on_cupy_arrays_of_the_other_gpu(dtype, precision, variant):
    """Device 0 current, arrays on device 1: the first call (full path) and three repeats
    (replays, with and without ``out=``) are right, land on device 1, and leave device 0
    current; then the same shapes on device 0 (another key) and on device 1 again."""
    rng = np.random.default_rng()
    m, n, k = 384, 520, 264
    tol = TOLERANCES[(dtype, precision)]
    for rounds, dev in ((4, 1), (2, 0), (2, 1)):
        for r in range(rounds):
            a, b = _operands(rng, dtype, m, n, k)
            with cupy.cuda.Device(dev):
                da, db = cupy.asarray(a), cupy.asarray(b)
            out = _poisoned((m, n), dtype, dev) if r % 2 else None
            assert cupy.cuda.runtime.getDevice() == 0
            res = nbkernels.gemm(da, db, out=out, precision=precision, variant=variant)
            assert cupy.cuda.runtime.getDevice() == 0, "the caller's device changed"
            assert res.device.id == dev and (out is None or res is out)
            with cupy.cuda.Device(dev):
                cupy.cuda.Device(dev).synchronize()
                got = cupy.asnumpy(res)
            err, where = relerr(got, reference(a, b, precision=precision))
            assert err <= tol, f"device {dev} call {r}: relative error {err:.3g}; {where}"


def test_fused_gemm_on_the_other_gpu():
    """A fused bias + GELU epilogue on device-1 arrays with device 0 current, twice."""
    import math

    @nbkernels.gemm
    def bias_gelu(acc, i, j, bias):
        x = acc + bias[j]
        return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))

    rng = np.random.default_rng()
    for _ in range(2):
        a, b = _operands(rng, "float16", 256, 192, 128)
        bias = rng.standard_normal(192).astype(np.float32)
        with cupy.cuda.Device(1):
            da, db, dbias = cupy.asarray(a), cupy.asarray(b), cupy.asarray(bias)
        res = bias_gelu(da, db, dbias)
        assert res.device.id == 1 and cupy.cuda.runtime.getDevice() == 0
        x = reference(a, b) + bias
        want = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2)))
        with cupy.cuda.Device(1):
            err, where = relerr(cupy.asnumpy(res), want)
        assert err <= 2e-3, f"relative error {err:.3g}; {where}"


@pytest.mark.parametrize("op", ["rms_norm", "rms_norm_residual", "layer_norm", "softmax",
                                "swiglu"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_row_ops_on_cupy_arrays_of_the_other_gpu(op, dtype):
    """Each row op on device-1 CuPy arrays with device 0 current: three calls (the full path,
    then replays), with poisoned ``out`` arrays and without."""
    rng = np.random.default_rng()
    shape = (96, 2048)
    for call in range(3):
        with cupy.cuda.Device(1):  # inputs and poisoned outputs made on device 1
            args, kwargs, refs = row_cases.make(op, dtype, shape, "contig", None, rng, "cupy")
            outs = ([row_cases.poisoned(s, dtype, "cupy")
                     for s in row_cases.out_shapes(op, shape)] if call % 2 else None)
        assert cupy.cuda.runtime.getDevice() == 0
        got = row_cases.call(op, args, kwargs, outs, None)
        assert cupy.cuda.runtime.getDevice() == 0, "the caller's device changed"
        for i, (g, want) in enumerate(zip(got, refs)):
            assert g.device.id == 1 and (outs is None or g is outs[i])
            with cupy.cuda.Device(1):
                m = row_cases.mismatch(f"{op} call {call} result {i}", cupy.asnumpy(g), want,
                                       dtype)
            assert m is None, m


def test_torch_tensors_on_the_other_gpu():
    """torch tensors on cuda:1 with cuda:0 current (torch's default): gemm, rms_norm and
    softmax, three calls each, right and on cuda:1; torch's current device unchanged."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    dev = torch.device("cuda", 1)
    assert torch.cuda.current_device() == 0
    for _ in range(3):
        a, b = _operands(rng, "bfloat16", 256, 320, 192)
        ta = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(dev)
        tb = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16).to(dev)
        res = nbkernels.gemm(ta, tb)
        assert res.device == dev and torch.cuda.current_device() == 0
        got = res.float().cpu().numpy()
        err, where = relerr(got, reference(a, b))
        assert err <= TOLERANCES[("bfloat16", None)], f"gemm: {err:.3g}; {where}"
        x = rng.standard_normal((64, 4096)).astype(np.float32)
        w = (rng.standard_normal(4096) + 1).astype(np.float32)
        tx, tw = torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)
        y = nbkernels.rms_norm(tx, tw, eps=1e-6)
        s = nbkernels.softmax(tx)
        torch.cuda.synchronize(dev)
        assert y.device == dev and s.device == dev and torch.cuda.current_device() == 0
        for name, g, want in (("rms_norm", y, row_cases.rms_norm_ref(x, w, 1e-6)),
                              ("softmax", s, row_cases.softmax_ref(x))):
            m = row_cases.mismatch(name, g.cpu().numpy(), want, "float32")
            assert m is None, m


def test_a_stream_of_another_gpu_is_refused_and_out_untouched():
    """Arrays on device 1, a stream of device 0 (CuPy's, a raw handle): a typed error naming
    the stream, on the full path and on a recorded call's repeat, and ``out`` keeps its
    poison; a stream of device 1 is taken."""
    rng = np.random.default_rng()
    a, b = _operands(rng, "float16", 128, 128, 64)
    x = rng.standard_normal((8, 1024)).astype(np.float32)
    with cupy.cuda.Device(1):
        da, db, dx = cupy.asarray(a), cupy.asarray(b), cupy.asarray(x)
        s1 = cupy.cuda.Stream(non_blocking=True)
    with cupy.cuda.Device(0):
        s0 = cupy.cuda.Stream(non_blocking=True)
    for rep in range(2):  # the second time the calls below have been recorded
        for stream in (s0, s0.ptr):
            out = _poisoned((128, 128), "float16", 1)
            with pytest.raises(NbkernelsError, match="stream: is a stream of GPU 0, but the "
                                                     "arrays are on GPU 1"):
                nbkernels.gemm(da, db, out=out, stream=stream)
            with pytest.raises(NbkernelsError, match="stream: is a stream of GPU 0"):
                nbkernels.softmax(dx, stream=stream)
            with cupy.cuda.Device(1):
                assert bool(cupy.isnan(out).all()), "out was written"
        res = nbkernels.gemm(da, db, stream=s1)
        sm = nbkernels.softmax(dx, stream=s1)
        s1.synchronize()
        with cupy.cuda.Device(1):
            err, where = relerr(cupy.asnumpy(res), reference(a, b))
            got_sm = cupy.asnumpy(sm)
        assert err <= TOLERANCES[("float16", None)], where
        m = row_cases.mismatch("softmax", got_sm, row_cases.softmax_ref(x), "float32")
        assert m is None, m


def test_arrays_on_two_gpus_are_refused():
    rng = np.random.default_rng()
    a, b = _operands(rng, "float16", 64, 64, 64)
    with cupy.cuda.Device(0):
        da = cupy.asarray(a)
    with cupy.cuda.Device(1):
        db = cupy.asarray(b)
        dx, dw = cupy.ones((4, 64), np.float32), cupy.ones(64, np.float32)
    with pytest.raises(NbkernelsError, match="different GPUs"):
        nbkernels.gemm(da, db)
    with pytest.raises(NbkernelsError, match="weight is in GPU 0"):
        nbkernels.rms_norm(dx, cupy.ones(64, np.float32))
    out = _poisoned((64, 64), "float16", 1)
    with pytest.raises(NbkernelsError, match="different GPUs"):
        nbkernels.gemm(db, da, out=out)
    with cupy.cuda.Device(1):
        assert bool(cupy.isnan(out).all())
    del dw


def test_explain_describes_the_arrays_gpu():
    """``explain`` plans on the arrays' device (device 0 current): it names the variant the
    arrays' GPU runs, and leaves device 0 current."""
    with cupy.cuda.Device(1):
        da = cupy.ones((256, 256), np.float16)
        cc = cupy.cuda.Device(1).compute_capability
    text = nbkernels.explain(da, da)
    assert cupy.cuda.runtime.getDevice() == 0
    assert ("sm90a" in text) == (cc == "90"), text


def test_autotune_on_the_other_gpu(tmp_path, monkeypatch):
    """``autotune`` on device-1 arrays with device 0 current: it times, stores and is used
    there, and leaves device 0 current."""
    from nbkernels.matmul import TileConfig, tuning

    monkeypatch.setenv("NBKERNELS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tuning, "_table", None)
    rng = np.random.default_rng()
    a, b = _operands(rng, "float16", 512, 256, 384)
    with cupy.cuda.Device(1):
        da, db = cupy.asarray(a), cupy.asarray(b)
    cands = [TileConfig(64, 64, 64, 2, 2, 4), TileConfig(128, 128, 64, 2, 2, 4)]
    best = nbkernels.autotune(da, db, candidates=cands, reps=3, progress=False, variant="sm80")
    assert best in cands and cupy.cuda.runtime.getDevice() == 0
    text = nbkernels.explain(da, db, variant="sm80")
    assert "autotuner" in text and str(best) in text, text
    res = nbkernels.gemm(da, db, variant="sm80")
    with cupy.cuda.Device(1):
        err, where = relerr(cupy.asnumpy(res), reference(a, b))
    assert err <= TOLERANCES[("float16", None)], where
