"""Arrays of other frameworks, read through DLPack (JAX, Paddle, ...): exchanged without a copy for arrays
nbkernels reads, results given back in the caller's framework through its ``from_dlpack``,
``out`` written in place and returned as itself. The exchange on the CPU (host memory, a
stand-in call), then gemm and the row ops on a GPU."""
import sys
import types

import numpy as np
import pytest

import nbkernels
from nbkernels import arrays
from nbkernels.errors import NbkernelsError

from . import row_cases
from .gemm_cases import TOLERANCES, reference, relerr

FAKE = "nbk_dlpack_framework"  # the module the stand-in array type claims to come from


class DLArray:
    """An array that offers DLPack and a shape, and nothing else nbkernels knows."""

    def __init__(self, x):
        self._x = x

    @property
    def shape(self):
        return self._x.shape

    def __dlpack__(self, **kw):
        return self._x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._x.__dlpack_device__()


DLArray.__module__ = FAKE


@pytest.fixture
def framework(monkeypatch):
    """The stand-in framework's module, with a ``from_dlpack`` that records what it wraps."""
    made = []

    def from_dlpack(x):
        made.append(x)
        return DLArray(x)

    monkeypatch.setitem(sys.modules, FAKE, types.SimpleNamespace(from_dlpack=from_dlpack))
    return made


def test_via_dlpack_tells_the_kinds_apart():
    assert arrays.via_dlpack(DLArray(np.zeros(3)))
    assert not arrays.via_dlpack(np.zeros(3))  # NumPy has __dlpack__ but is read as NumPy
    assert not arrays.via_dlpack(object())


def test_the_exchange_shares_memory_and_gives_results_back(framework):
    """Host memory: the call sees NumPy views of the caller's arrays (no copy), its new
    result comes back through the framework's ``from_dlpack``, ``out`` as the object given."""
    a, b, o = np.ones((2, 3)), np.full((3, 2), 2.0), np.full((2, 2), np.nan)
    A, B, O = DLArray(a), DLArray(b), DLArray(o)
    seen = {}

    def call(x, y, *, out=None, scale=1.0):
        seen.update(x=x, y=y, out=out)
        r = scale * (x @ y)
        if out is None:
            return r
        out[...] = r
        return out, r

    res = arrays.call_with_dlpack(call, (A, B), {"scale": 0.5})
    assert np.shares_memory(seen["x"], a) and np.shares_memory(seen["y"], b)
    assert isinstance(res, DLArray) and len(framework) == 1
    np.testing.assert_array_equal(np.from_dlpack(res), np.full((2, 2), 3.0))
    both = arrays.call_with_dlpack(call, (A, B), {"out": O})
    assert both[0] is O and isinstance(both[1], DLArray)  # out as itself, the rest wrapped
    np.testing.assert_array_equal(o, np.full((2, 2), 6.0))  # written in place


def test_an_array_interface_object_of_another_framework_goes_through_dlpack(framework):
    """JAX offers ``__cuda_array_interface__`` beside DLPack for some dtypes: through DLPack
    its results come back as its own arrays."""
    class Both(DLArray):
        __cuda_array_interface__ = {}

    Both.__module__ = FAKE

    assert arrays.via_dlpack(Both(np.zeros(2)))
    res = arrays.call_with_dlpack(lambda x: x + 1, (Both(np.zeros(2)),), {})
    assert isinstance(res, DLArray)


@pytest.mark.parametrize("stream", [None, 0x7000])
def test_with_a_stream_the_exchange_both_ways_runs_with_it_current(monkeypatch, stream):
    """``from_dlpack`` passes the current stream to the producer: with ``stream=`` that stream
    must be current while the arguments are read and while the results are handed back (the
    consumer then waits for it, where the kernels ran), on the device the arrays are on."""
    class GpuArray(DLArray):
        def __dlpack_device__(self):
            return (2, 1)  # kDLCUDA, device 1

    GpuArray.__module__ = FAKE
    log, current = [], [None]

    class Made:  # what the exchange hands the call
        def __init__(self, x):
            self.x = x

    def on_stream(framework, device, s):
        class Ctx:
            def __enter__(self):
                log.append(("enter", device, s))
                current[0] = s

            def __exit__(self, *exc):
                log.append(("exit",))
                current[0] = None
        return Ctx()

    monkeypatch.setattr(arrays, "on_stream", on_stream)
    monkeypatch.setattr(arrays, "_gpu_exchange", lambda: types.SimpleNamespace(__name__="cupy"))
    monkeypatch.setattr(arrays, "_from_dlpack",
                        lambda x, name: log.append(("read", name, current[0])) or Made(x))
    monkeypatch.setattr(arrays, "_to_framework",
                        lambda r, like: log.append(("back", current[0])) or r)

    def call(x, *, stream=None):
        log.append(("call", stream, current[0]))
        return np.ones(2)

    arrays.call_with_dlpack(call, (GpuArray(np.zeros(2)),), {"stream": stream})
    if stream is None:
        assert log == [("read", "argument 0", None), ("call", None, None), ("back", None)]
    else:
        assert log == [("enter", 1, stream), ("read", "argument 0", stream),
                       ("call", stream, stream), ("back", stream), ("exit",)]


def test_out_of_an_immutable_framework_is_refused(monkeypatch):
    class JaxLike(DLArray):
        pass

    JaxLike.__module__ = "jaxlib._jax"
    o = np.zeros(2)
    with pytest.raises(NbkernelsError, match="out: JaxLike arrays are immutable"):
        arrays.call_with_dlpack(lambda x, out: None, (DLArray(np.ones(2)),), {"out": JaxLike(o)})


def test_a_dlpack_array_on_another_kind_of_device_is_refused():
    class Odd(DLArray):
        def __dlpack_device__(self):
            return (14, 0)  # kDLOneAPI

    with pytest.raises(NbkernelsError, match="argument 0: its DLPack device type is 14"):
        arrays.call_with_dlpack(lambda x: x, (Odd(np.zeros(2)),), {})


def test_without_from_dlpack_the_result_stays_as_nbkernels_made_it(monkeypatch):
    monkeypatch.setitem(sys.modules, FAKE, types.SimpleNamespace())
    res = arrays.call_with_dlpack(lambda x: x + 1, (DLArray(np.zeros(2)),), {})
    assert isinstance(res, np.ndarray)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_gemm_and_row_ops_on_dlpack_arrays(framework, dtype):
    """GPU memory: gemm (twice, with and without ``out=``) and rms_norm and softmax on
    DLPack-only wrappers of CuPy arrays; results are the caller's type, right against float64."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng()
    dt = row_cases.DTYPES[dtype]
    prec = "3xtf32" if dtype == "float32" else None
    for with_out in (False, True):
        a = rng.standard_normal((200, 136)).astype(dt)
        b = rng.standard_normal((136, 72)).astype(dt)
        o = cupy.asarray(np.full((200, 72), np.nan, np.float32).astype(dt))
        res = nbkernels.gemm(DLArray(cupy.asarray(a)), DLArray(cupy.asarray(b)),
                             out=DLArray(o) if with_out else None, precision=prec)
        assert isinstance(res, DLArray)
        got = cupy.asnumpy(o) if with_out else cupy.asnumpy(cupy.from_dlpack(res))
        err, where = relerr(got, reference(a, b, precision=prec))
        assert err <= TOLERANCES[(dtype, prec)], f"gemm out={with_out}: {err:.3g}; {where}"
    x = rng.standard_normal((33, 1000)).astype(dt)
    w = (rng.standard_normal(1000) + 1).astype(dt)
    y = nbkernels.rms_norm(DLArray(cupy.asarray(x)), DLArray(cupy.asarray(w)), eps=1e-6)
    s = nbkernels.softmax(DLArray(cupy.asarray(x)))
    for name, r, want in (("rms_norm", y, row_cases.rms_norm_ref(x, w, 1e-6)),
                          ("softmax", s, row_cases.softmax_ref(x))):
        assert isinstance(r, DLArray), name
        m = row_cases.mismatch(name, cupy.asnumpy(cupy.from_dlpack(r)), want, dtype)
        assert m is None, m


@pytest.mark.gpu
def test_with_a_stream_a_dlpack_argument_is_read_after_its_producers_work(framework):
    """A DLPack array whose producer still writes it on its own non-blocking stream (as JAX
    does: its ``__dlpack__(stream=s)`` makes ``s`` wait for that work), passed with ``stream=``
    another non-blocking stream: the exchange must name the given stream to the producer. Had
    it named the current (legacy) stream, the kernels would read the array's NaN."""
    cupy = pytest.importorskip("cupy")
    from .torch_streams import cupy_sleep

    class Produced(DLArray):
        def __init__(self, x, stream):
            super().__init__(x)
            self.stream = stream

        def __dlpack__(self, stream=None, **kw):
            with self.stream:  # CuPy orders its current stream before the consumer's
                return self._x.__dlpack__(stream=stream, **kw)

    Produced.__module__ = FAKE
    rng = np.random.default_rng()
    xh = (rng.standard_normal((300, 5000)) * 5).astype(np.float32)
    t = cupy.cuda.Stream(non_blocking=True)
    nbkernels.softmax(DLArray(cupy.asarray(xh)), stream=t)  # compiled and loaded
    cupy.cuda.Device().synchronize()
    p = cupy.cuda.Stream(non_blocking=True)
    x = cupy.full(xh.shape, np.nan, np.float32)
    src = cupy.asarray(xh)
    cupy.cuda.Device().synchronize()
    cupy_sleep(p, 100)
    with p:
        x[...] = src  # lands ~100 ms later, on the producer's stream
    res = nbkernels.softmax(Produced(x, p), stream=t)
    t.synchronize()
    got = cupy.asnumpy(cupy.from_dlpack(res))
    m = row_cases.mismatch("softmax of a DLPack array still being written", got,
                           row_cases.softmax_ref(xh), "float32")
    assert m is None, m
