"""Which GPU a call runs on (nbkernels.arrays: device_of, on_device, DeviceScope, the stream
check), on the CPU with a stand-in for the driver. tests/test_multi_gpu.py runs the same on
two GPUs."""
import contextlib
import types

import numpy as np
import pytest

from nbkernels import arrays
from nbkernels.errors import NbkernelsError


class FakeDriver:
    """The driver calls the device helpers make: one current context per thread, contexts
    named ``ctx<device>``; streams of known devices."""

    class CUresult:
        CUDA_SUCCESS = "ok"
        CUDA_ERROR_INVALID_CONTEXT = types.SimpleNamespace(name="CUDA_ERROR_INVALID_CONTEXT")

    def __init__(self, current=None, streams=None):
        self.current, self.calls, self.streams = current, [], streams or {}

    def cuCtxGetDevice(self):
        if self.current is None:
            return self.CUresult.CUDA_ERROR_INVALID_CONTEXT, 0
        return "ok", int(self.current[3:])

    def cuCtxGetCurrent(self):
        return "ok", self.current

    def cuCtxSetCurrent(self, ctx):
        self.calls.append(("set", ctx))
        self.current = ctx
        return ("ok",)

    def cuDevicePrimaryCtxRetain(self, device):
        self.calls.append(("retain", device))
        return "ok", f"ctx{device}"

    def CUstream(self, handle):
        return handle

    def cuStreamGetDevice(self, handle):
        return ("ok", self.streams[handle]) if handle in self.streams else ("bad", 0)

    def cuStreamGetCtx(self, handle):
        return "bad", None


@pytest.fixture
def driver(monkeypatch):
    drv = FakeDriver(current="ctx0", streams={0x10: 0, 0x20: 1})
    monkeypatch.setattr(arrays, "_driver", lambda: drv)
    monkeypatch.setattr(arrays, "_PRIMARY", {})
    return drv


class CupyLike:
    """What device_of reads from a CuPy array."""

    def __init__(self, device):
        self.data = types.SimpleNamespace(device_id=device, ptr=0x1000)


CupyLike.__module__ = "cupy._core.core"


class CaiLike:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4",
                                         "version": 3}


def test_device_of_reads_each_kind_of_array(monkeypatch):
    assert arrays.device_of(np.zeros(3)) is None
    assert arrays.device_of("not an array") is None
    assert arrays.device_of(CupyLike(2)) == 2
    monkeypatch.setattr(arrays, "_device_of_pointer", lambda ptr: {0x5000: 1}.get(ptr))
    assert arrays.device_of(CaiLike(0x5000)) == 1
    assert arrays.device_of(CaiLike(0)) is None  # an empty array: no pointer to ask about


def test_on_device_switches_only_where_another_device_is_current(driver):
    assert isinstance(arrays.on_device(None), contextlib.nullcontext)
    assert isinstance(arrays.on_device(0), contextlib.nullcontext)
    assert driver.calls == []
    with arrays.on_device(1):
        assert driver.current == "ctx1"
        assert arrays.current_device() == 1
    assert driver.current == "ctx0"  # the caller's context back
    assert driver.calls == [("retain", 1), ("set", "ctx1"), ("set", "ctx0")]
    driver.calls.clear()
    with pytest.raises(RuntimeError):
        with arrays.on_device(1):
            raise RuntimeError("the call failed")
    assert driver.current == "ctx0"  # put back on an error too
    assert ("retain", 1) not in driver.calls  # the primary context retained once


def test_on_device_without_a_current_context(driver):
    driver.current = None
    assert arrays.current_device() is None
    with arrays.on_device(0):
        assert driver.current == "ctx0"
    assert driver.current is None


def test_a_stream_of_another_gpu_is_refused(driver):
    assert arrays.check_stream_device(0x20, 1) == 0x20
    assert arrays.check_stream_device(0x10, None) == 0x10  # host arrays: nothing to check
    for default in (0, 1, 2):  # the default streams follow the current device
        assert arrays.check_stream_device(default, 1) == default
    assert arrays.check_stream_device(0x30, 1) == 0x30  # the driver cannot say: let it launch
    with pytest.raises(NbkernelsError, match=r"stream: is a stream of GPU 0, but the arrays are "
                                             r"on GPU 1; pass a stream of GPU 1"):
        arrays.check_stream_device(0x10, 1)
    with pytest.raises(NbkernelsError, match="stream of GPU 0"):
        arrays.current_stream_handle("cupy", 1, types.SimpleNamespace(ptr=0x10))
    assert arrays.current_stream_handle("torch", 1, types.SimpleNamespace(cuda_stream=0x20)) \
        == 0x20
