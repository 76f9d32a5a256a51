"""The CUDA Array Interface's ``stream`` entry (v3) both ways, on the CPU with stand-ins for
the driver and numba: which streams a call waits for, through what, and the errors; numba
results bound to the call's stream; read-only arrays marked. tests/test_array_streams_gpu.py
runs the streams against work still queued on a GPU."""
import types

import numpy as np
import pytest

from nbkernels import arrays
from nbkernels.errors import NbkernelsError
from nbkernels.rows import host


NO_ENTRY = object()


class Cai:
    """A device array known only by its ``__cuda_array_interface__``."""

    def __init__(self, shape=(4, 64), stream=None, ptr=1 << 20, typestr="<f4"):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False),
                                             strides=None, version=3)
        if stream is not NO_ENTRY:
            self.__cuda_array_interface__["stream"] = stream


class EventDriver:
    """The driver calls of :func:`arrays.await_producers`, recorded in order."""

    class CUresult:
        CUDA_SUCCESS = "ok"

    CUevent_flags = types.SimpleNamespace(CU_EVENT_DISABLE_TIMING="no-timing")

    def __init__(self, failing=()):
        self.calls, self.failing, self.events = [], set(failing), 0

    def CUstream(self, handle):
        return ("stream", handle)

    def cuEventCreate(self, flags):
        self.events += 1
        self.calls.append(("create", flags))
        return "ok", f"ev{self.events}"

    def cuEventRecord(self, event, stream):
        self.calls.append(("record", event, stream[1]))
        return ("bad handle" if stream[1] in self.failing else "ok",)

    def cuStreamWaitEvent(self, stream, event, flags):
        self.calls.append(("wait", stream[1], event, flags))
        return ("ok",)

    def cuEventDestroy(self, event):
        self.calls.append(("destroy", event))
        return ("ok",)


@pytest.fixture
def driver(monkeypatch):
    drv = EventDriver(failing={0xBAD})
    monkeypatch.setattr(arrays, "_driver", lambda: drv)
    monkeypatch.setattr(arrays, "_device_of_pointer", lambda ptr: 0)
    monkeypatch.delenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", raising=False)
    return drv


def view(stream, **kw):
    return arrays.as_view(Cai(stream=stream, **kw), "x")


@pytest.mark.parametrize("given, read", [(None, None), (0x5000, 0x5000), (1, 1), (2, 2),
                                         (0, 1), (np.int64(0x700), 0x700)])
def test_the_view_keeps_the_stream_the_interface_names(driver, given, read):
    """None: nothing to wait for; 1 and 2 the legacy and per-thread default streams; 0, which
    the protocol disallows, read as the legacy default stream (the one that waits the most)."""
    assert view(given).stream == read


def test_an_interface_without_a_stream_entry_names_none(driver):
    assert view(NO_ENTRY).stream is None


@pytest.mark.parametrize("bad", ["0x5000", 1.5, True, (1,)])
def test_a_stream_entry_that_is_not_a_handle_is_refused_by_name(driver, bad):
    with pytest.raises(NbkernelsError, match=r"x: its __cuda_array_interface__ 'stream' must "
                                             r"be None or an integer"):
        view(bad)


def test_the_call_stream_waits_for_each_other_producer_once_on_the_gpu(driver):
    views = [("x", view(0x5000)), ("weight", view(0x6000)), ("out", view(0x5000)),
             ("bias", view(None)), ("c", None)]
    arrays.await_producers(0x9000, views)
    assert driver.calls == [("create", "no-timing"),
                            ("record", "ev1", 0x5000), ("wait", 0x9000, "ev1", 0),
                            ("record", "ev1", 0x6000), ("wait", 0x9000, "ev1", 0),
                            ("destroy", "ev1")]


@pytest.mark.parametrize("producer, call", [(0x5000, 0x5000), (1, 0), (0, 0), (None, 0)])
def test_nothing_is_waited_for_on_the_calls_own_stream(driver, producer, call):
    """The same stream (handle 0 and 1 both name the legacy default stream) orders itself."""
    arrays.await_producers(call, [("x", view(producer))])
    assert driver.calls == []


def test_the_legacy_stream_waits_for_a_producer_on_another_stream(driver):
    arrays.await_producers(0, [("x", view(0x5000)), ("y", view(2))])
    assert [c for c in driver.calls if c[0] in ("record", "wait")] == [
        ("record", "ev1", 0x5000), ("wait", 0, "ev1", 0),
        ("record", "ev1", 2), ("wait", 0, "ev1", 0)]


def test_numba_switch_turns_the_wait_off(driver, monkeypatch):
    monkeypatch.setenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "0")
    arrays.await_producers(0x9000, [("x", view(0x5000))])
    assert driver.calls == []
    monkeypatch.setenv("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "1")
    arrays.await_producers(0x9000, [("x", view(0x5000))])
    assert ("wait", 0x9000, "ev1", 0) in driver.calls


def test_a_stream_that_cannot_be_waited_for_names_the_argument_and_frees_the_event(driver):
    with pytest.raises(NbkernelsError, match=r"weight: its __cuda_array_interface__ names "
                                             r"stream 0xbad as its producer; expected a stream"):
        arrays.await_producers(0x9000, [("x", view(0x5000)), ("weight", view(0xBAD))])
    assert driver.calls[-1] == ("destroy", "ev1")
    assert ("wait", 0x9000, "ev1", 0) in driver.calls  # x's wait was queued before


def test_a_row_call_waits_once_before_its_first_launch_for_inputs_and_outputs(monkeypatch):
    """``Call.handle`` (asked by each launch) orders the call's stream once, with every array
    argument and the caller's ``out`` checked by then."""
    seen = []
    monkeypatch.setattr(arrays, "current_stream_handle", lambda fw, dev, stream: 0x9000)
    monkeypatch.setattr(arrays, "await_producers",
                        lambda h, named: seen.append((h, [(n, v.stream) for n, v in named])))
    monkeypatch.setattr(arrays, "_device_of_pointer", lambda ptr: 0)
    call = host.Call("softmax")
    call.sim = False
    x = call.rows(Cai((4, 64), stream=0x5000), "x")
    call.output(Cai((4, 64), stream=0x6000, ptr=1 << 24), "out", x)
    assert call.handle() == 0x9000 and call.handle() == 0x9000
    assert seen == [(0x9000, [("x", 0x5000), ("out", 0x6000)])]


def test_cupy_and_torch_views_name_no_producer():
    """Their own current streams order them; only interface objects carry a stream."""
    class Mem:
        ptr, device_id = 1 << 20, 0

    cupy_like = types.new_class("ndarray", (), {})
    cupy_like.__module__ = "cupy"
    x = cupy_like()
    x.dtype, x.shape, x.strides = np.dtype(np.float32), (4, 64), (256, 4)
    x.data, x.device = Mem(), types.SimpleNamespace(id=0)
    assert arrays.as_view(x, "x").stream is None


class NumbaStand:
    """``cuda.device_array`` and ``cuda.external_stream``, recorded."""

    def __init__(self):
        self.made = []

    def external_stream(self, handle):
        return ("ext", handle)

    def device_array(self, shape, dtype, stream=0):
        self.made.append((tuple(shape), np.dtype(dtype), stream))
        return Cai(shape, stream=None if stream == 0 else stream[1],
                   typestr=np.dtype(dtype).str)


@pytest.mark.parametrize("dtype, held", [(np.float32, np.float32), (np.float16, np.float16),
                                         (arrays.BF16, np.uint16)])
@pytest.mark.parametrize("stream", [0, 0x7000])
def test_a_numba_result_is_bound_to_the_calls_stream(monkeypatch, driver, dtype, held, stream):
    """Bound, numba's own ``copy_to_host()`` runs on that stream after the call's kernels (on
    the legacy stream it would not wait for a non-blocking one), and the result's interface
    names the stream to its next consumer. No binding for the legacy default stream."""
    from nbkernels import runner

    stand = NumbaStand()
    monkeypatch.setattr(runner, "cuda", stand)
    like = view(None)
    y = runner.empty(like, (4, 64), dtype, stream)
    assert stand.made == [((4, 64), np.dtype(held), ("ext", stream) if stream else 0)]
    assert y.__cuda_array_interface__.get("stream") == (stream or None)


@pytest.mark.parametrize("framework, stream, bound", [("cai", 0x7000, 0x7000), ("cai", None, 0),
                                                      ("numba", 0x7000, 0x7000),
                                                      ("cupy", 0x7000, 0), ("torch", 0x7000, 0)])
def test_a_row_calls_allocated_result_takes_the_given_stream_for_numba_inputs(
        monkeypatch, driver, framework, stream, bound):
    from nbkernels import runner

    made = []
    monkeypatch.setattr(arrays, "current_stream_handle", lambda fw, dev, s: arrays.raw_handle(s))
    monkeypatch.setattr(runner, "empty",
                        lambda like, shape, dtype, s=0: made.append(s) or Cai(shape, ptr=1 << 24))
    call = host.Call("softmax", stream)
    call.sim = False
    x = call.rows(Cai((4, 64)), "x")
    call.first.framework = framework
    call.output(None, "out", x)
    assert made == [bound]


@pytest.mark.parametrize("stream", [0, 0x7000])
def test_a_padded_numba_result_is_bound_too(monkeypatch, driver, stream):
    """Rows whose length is no 16-byte multiple: the numba result is the padded array itself,
    bound as the unpadded one would be."""
    class Dev:
        def __init__(self, buf, bound=None):
            self.buf, self.bound = buf, bound
            self.__cuda_array_interface__ = dict(shape=buf.shape, typestr=buf.dtype.str,
                                                 data=(1 << 20, False), strides=None, version=3,
                                                 stream=bound)

        def bind(self, s):
            return Dev(self.buf, s[1])

    monkeypatch.setattr(host, "cuda", types.SimpleNamespace(to_device=Dev,
                                                            external_stream=lambda h: ("ext", h)))
    padded = host._padded(view(None, shape=(4, 61)), copy=False, stream=stream)
    assert padded.shape == (4, 61)
    assert padded.__cuda_array_interface__["stream"] == (stream or None)


def test_a_row_call_asks_for_its_stream_once(monkeypatch, driver):
    """A numba result bound to ``stream=`` and the launches take one answer (one device check
    of the given stream per call)."""
    from nbkernels import runner

    asked = []
    monkeypatch.setattr(arrays, "current_stream_handle",
                        lambda fw, dev, s: asked.append(s) or arrays.raw_handle(s))
    monkeypatch.setattr(runner, "empty", lambda like, shape, dtype, s=0: Cai(shape, ptr=1 << 24))
    call = host.Call("softmax", 0x7000)
    call.sim = False
    x = call.rows(Cai((4, 64)), "x")
    call.output(None, "out", x)
    assert call.handle() == call.handle() == 0x7000
    assert asked == [0x7000]


def test_read_only_arrays_are_marked(driver):
    x = np.ones((4, 64), np.float32)
    assert not arrays.as_view(x, "x").readonly
    x.flags.writeable = False
    assert arrays.as_view(x, "x").readonly
    ro = Cai()
    ro.__cuda_array_interface__["data"] = (1 << 20, True)
    assert arrays.as_view(ro, "x").readonly and not view(None).readonly


def test_the_device_copy_path_refuses_a_read_only_out_before_the_work():
    """NumPy arrays with a GPU present go through ``host.via_device``: a read-only ``out`` is
    refused, naming the operation, before any copy or kernel."""
    out = np.full((4, 64), 7.0, np.float32)
    out.flags.writeable = False
    ran = []
    with pytest.raises(NbkernelsError, match=r"softmax: out is read-only \(flags.writeable"):
        host.via_device(lambda x: ran.append(x), {"x": np.ones((4, 64), np.float32)},
                        {"out": out}, "softmax")
    assert not ran and (out == 7.0).all()
