"""CUDA-array-interface arguments still being written on the stream their interface names
(v3 ``stream``): numba device arrays bound to a non-blocking stream, whose values (or, for
an ``out``, a NaN fill) land there ~100 ms after the call is made, a call made once before on
arrays of the same shapes (so nothing is compiled or loaded while the stream is held). A call
that did not wait for that stream would read NaN, or see its result overwritten (with the
wait switched off, ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0``, every test here must fail). tests/test_array_streams.py
checks the same on the CPU with a stand-in driver."""
import numpy as np
import pytest

from .row_cases import mismatch

pytestmark = pytest.mark.gpu

HOLD_MS = 100


def held_back(*values, nan_late=False):
    """Each of ``values`` as a numba device array bound to one new non-blocking stream: the
    arrays hold NaN, and the values are copied in on that stream behind a ~100 ms spin (or,
    ``nan_late``, they hold the values and the NaN lands late). Returns the bound arrays and
    what must stay alive until the stream is done."""
    cupy = pytest.importorskip("cupy")
    from numba import cuda

    from .torch_streams import cupy_sleep

    s = cupy.cuda.Stream(non_blocking=True)
    ns = cuda.external_stream(s.ptr)
    pairs = []
    for v in values:
        nan = np.full(v.shape, np.nan, v.dtype)
        first, late = (v, nan) if nan_late else (nan, v)
        pairs.append((cuda.to_device(first), cuda.to_device(late)))
    cuda.synchronize()
    cupy_sleep(s, HOLD_MS)
    bound = []
    for arr, src in pairs:
        arr.copy_to_device(src, stream=ns)  # device to device, queued behind the spin
        bound.append(arr.bind(ns))
        assert bound[-1].__cuda_array_interface__["stream"] == s.ptr
    return bound, (s, pairs)


def warmed(fn, *values):
    """``fn`` called once on plain device copies of ``values`` and the device synchronized:
    the kernels a later call of the same shapes launches are then compiled and loaded."""
    from numba import cuda

    fn(*[cuda.to_device(v) for v in values])
    cuda.synchronize()
    return fn


def settle(y):
    from numba import cuda

    cuda.synchronize()
    return y.copy_to_host()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_row_op_waits_for_its_input_and_weight_streams(dtype):
    import nbkernels
    from nbkernels.rows import rms_norm_ref

    rng = np.random.default_rng()
    xh = rng.standard_normal((64, 4096)).astype(dtype)
    wh = (rng.standard_normal(4096) + 1).astype(dtype)
    call = warmed(nbkernels.rms_norm, xh, wh)
    (x, w), keep = held_back(xh, wh)
    y = settle(call(x, w))
    m = mismatch("rms_norm of arrays held back on their streams", y, rms_norm_ref(xh, wh), dtype)
    assert m is None, m


def test_a_given_stream_waits_for_the_input_stream():
    """``stream=`` another non-blocking stream: the call's kernels wait there."""
    cupy = pytest.importorskip("cupy")
    import nbkernels
    from nbkernels.rows import softmax_ref

    rng = np.random.default_rng()
    xh = (rng.standard_normal((300, 5000)) * 10).astype(np.float32)
    t = cupy.cuda.Stream(non_blocking=True)
    warmed(lambda x: nbkernels.softmax(x, stream=t), xh)
    (x,), keep = held_back(xh)
    y = nbkernels.softmax(x, stream=t)
    t.synchronize()
    m = mismatch("softmax of an array held back, on a given stream", settle(y), softmax_ref(xh),
                 "float32")
    assert m is None, m


def test_an_out_still_written_on_its_stream_is_written_after_that():
    """The NaN fill queued on ``out``'s stream lands first; the call's result after it."""
    import nbkernels
    from numba import cuda
    from nbkernels.rows import layer_norm_ref

    rng = np.random.default_rng()
    xh = rng.standard_normal((64, 4096)).astype(np.float32)
    wh, bh = rng.standard_normal(4096).astype(np.float32), rng.standard_normal(4096).astype(
        np.float32)
    x, w, b = cuda.to_device(xh), cuda.to_device(wh), cuda.to_device(bh)
    warmed(lambda o: nbkernels.layer_norm(x, w, b, out=o), xh)
    (out,), keep = held_back(rng.standard_normal((64, 4096)).astype(np.float32), nan_late=True)
    y = nbkernels.layer_norm(x, w, b, out=out)
    assert y is out
    m = mismatch("layer_norm into an out held back on its stream", settle(y),
                 layer_norm_ref(xh, wh, bh), "float32")
    assert m is None, m


@pytest.mark.parametrize("which", ["a", "b", "out"])
def test_gemm_waits_for_its_operand_streams(which):
    import nbkernels
    from numba import cuda

    rng = np.random.default_rng()
    ah = rng.standard_normal((512, 384)).astype(np.float16)
    bh = rng.standard_normal((384, 256)).astype(np.float16)
    want = ah.astype(np.float64) @ bh.astype(np.float64)
    a, b = cuda.to_device(ah), cuda.to_device(bh)
    o = rng.standard_normal((512, 256)).astype(np.float16)
    warmed(lambda o: nbkernels.gemm(a, b, out=o), o)
    warmed(nbkernels.gemm, ah, bh)
    if which == "out":
        (out,), keep = held_back(o, nan_late=True)
        y = nbkernels.gemm(a, b, out=out)
    else:
        (held,), keep = held_back(ah if which == "a" else bh)
        a, b = (held, b) if which == "a" else (a, held)
        y = nbkernels.gemm(a, b)
    got = settle(y).astype(np.float64)
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    assert np.isfinite(got).all() and err < 5e-3, (which, err)


@pytest.mark.parametrize("op", ["softmax", "gemm"])
def test_a_numba_result_is_bound_to_the_given_stream(op):
    """The producer side: with ``stream=`` a non-blocking stream held back ~100 ms before the
    call, the numba result's interface names that stream, and numba's own ``copy_to_host()``
    (no stream given, no synchronization before it) returns the call's values: it runs on the
    bound stream after the kernels. On the legacy stream it would read the memory before the
    kernels wrote it (stale values of a first call on other inputs, or garbage)."""
    cupy = pytest.importorskip("cupy")
    import nbkernels
    from numba import cuda
    from nbkernels.rows import softmax_ref

    from .torch_streams import cupy_sleep

    rng = np.random.default_rng()
    t = cupy.cuda.Stream(non_blocking=True)
    if op == "softmax":
        shape = (300, 5000)
        fn = lambda x: nbkernels.softmax(x, stream=t)  # noqa: E731
        want = lambda xs: softmax_ref(xs[0])  # noqa: E731
        make = lambda: [(rng.standard_normal(shape) * 5).astype(np.float32)]  # noqa: E731
    else:
        fn = lambda a, b: nbkernels.gemm(a, b, stream=t)  # noqa: E731
        want = lambda xs: xs[0].astype(np.float64) @ xs[1].astype(np.float64)  # noqa: E731
        make = lambda: [rng.standard_normal((512, 384)).astype(np.float16),  # noqa: E731
                        rng.standard_normal((384, 256)).astype(np.float16)]
    first = [cuda.to_device(v) for v in make()]
    fn(*first)  # compiled and loaded; its result, freed, may lend the next one its memory
    cuda.synchronize()
    values = make()
    args = [cuda.to_device(v) for v in values]
    cuda.synchronize()
    cupy_sleep(t, HOLD_MS)
    y = fn(*args)
    got = y.copy_to_host().astype(np.float64)  # the values first: the race, not the entry
    ref = want(values)
    if op == "softmax":
        m = mismatch("softmax's numba result read back at once", got, ref, "float32")
        assert m is None, m
    else:
        err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
        assert np.isfinite(got).all() and err < 5e-3, err
    assert y.__cuda_array_interface__["stream"] == t.ptr
