"""One view of the arrays users already have: CuPy, NumPy, torch, DLPack and CUDA-array-interface.

:func:`as_view` turns an argument into an :class:`ArrayView` (device pointer, shape, strides in
elements, a NumPy dtype with ml_dtypes' bfloat16 for bf16, device id, framework), without
copying device arrays. NumPy (host) arrays are marked ``host=True``; the caller copies them.
torch tensors are read through their own attributes (their ``__cuda_array_interface__`` types
bf16 as the ambiguous ``<V2``); other objects through ``__cuda_array_interface__``.
"""
from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from .errors import NbkernelsError

BF16 = np.dtype(ml_dtypes.bfloat16)


@dataclass
class ArrayView:
    ptr: int  # device address of element (0, ..., 0); 0 for host arrays
    shape: tuple
    strides: tuple  # in elements
    dtype: np.dtype
    framework: str  # "numpy", "cupy", "torch", "numba", "cai"
    device: int | None  # CUDA device ordinal, None for host arrays
    obj: Any  # the object itself, kept alive
    host: bool = False
    #: the stream a CUDA-array-interface object says its data is produced on (its ``stream``
    #: entry; None where it names none, and for every other framework): the call's stream
    #: waits for it before a kernel touches the array (:func:`await_producers`)
    stream: int | None = None
    #: the data may not be written: a NumPy array whose ``flags.writeable`` is off, or an
    #: array-interface object whose ``data`` says read-only (:func:`check_writable`)
    readonly: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


def _framework(obj) -> str:
    mod = type(obj).__module__.split(".")[0]
    if isinstance(obj, np.ndarray):
        return "numpy"
    if mod == "cupy":
        return "cupy"
    if mod == "torch":
        return "torch"
    if mod == "numba" and hasattr(obj, "__cuda_array_interface__"):
        return "numba"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cai"
    return "unknown"


_TORCH_DTYPES = None  # torch dtype -> NumPy dtype
_FROM_NUMPY: dict = {}  # NumPy dtype -> torch dtype


def _torch_table():
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch

        _TORCH_DTYPES = {
            torch.float16: np.dtype(np.float16), torch.bfloat16: BF16,
            torch.float32: np.dtype(np.float32), torch.float64: np.dtype(np.float64),
            torch.int8: np.dtype(np.int8), torch.uint8: np.dtype(np.uint8),
            torch.int32: np.dtype(np.int32), torch.int64: np.dtype(np.int64),
        }
    return _TORCH_DTYPES


def _torch_dtype(t):
    try:
        return _torch_table()[t.dtype]
    except KeyError:
        raise TypeError(f"unsupported torch dtype {t.dtype}") from None


def torch_dtype_of(dtype):
    """The torch dtype of a NumPy dtype (ml_dtypes' bfloat16 -> torch.bfloat16)."""
    t = _FROM_NUMPY.get(dtype)
    if t is None:
        reverse = {v: k for k, v in _torch_table().items()}
        try:
            t = _FROM_NUMPY[dtype] = reverse[np.dtype(dtype)]
        except KeyError:
            raise TypeError(f"no torch dtype for {np.dtype(dtype)}") from None
    return t


def _elem_strides(byte_strides, itemsize, name):
    out = []
    for s in byte_strides:
        if s % itemsize:
            raise NbkernelsError(
                f"{name}: strides must be whole elements of {itemsize} bytes, got {byte_strides}")
        out.append(s // itemsize)
    return tuple(out)


def as_view(obj, name: str) -> ArrayView:
    """Describe ``obj`` (named ``name`` in messages) without copying it."""
    fw = _framework(obj)
    if fw == "numpy":
        # ptr: the offset from the start of the owning allocation, so that alignment checks
        # see what a device copy of the whole allocation (or the simulator) would see.
        return ArrayView(_offset_in_owner(obj), obj.shape,
                         _elem_strides(obj.strides, obj.itemsize, name), obj.dtype, "numpy",
                         None, obj, host=True, readonly=not obj.flags.writeable)
    if fw == "cupy":
        dt = np.dtype(obj.dtype)
        return ArrayView(int(obj.data.ptr), tuple(obj.shape),
                         _elem_strides(obj.strides, dt.itemsize, name), dt, "cupy",
                         int(obj.device.id), obj)
    if fw == "torch":
        dt = _torch_dtype(obj)
        if not obj.is_cuda:
            host = obj.detach().contiguous()
            arr = (host.view(__import__("torch").int16).numpy().view(BF16)
                   if dt == BF16 else host.numpy())
            # obj is the NumPy view of the tensor's memory; the tensor stays alive through it
            return ArrayView(0, arr.shape, _elem_strides(arr.strides, arr.itemsize, name),
                             arr.dtype, "torch", None, arr, host=True)
        return ArrayView(int(obj.data_ptr()), tuple(obj.shape), tuple(obj.stride()), dt,
                         "torch", int(obj.device.index), obj)
    if fw in ("numba", "cai"):
        cai = obj.__cuda_array_interface__
        if cai.get("mask") is not None:
            raise NbkernelsError(f"{name}: its __cuda_array_interface__ has a mask; expected an "
                                 "unmasked array (nbkernels reads and writes every element)")
        declared = getattr(obj, "nbk_dtype", None)  # (a dtype is falsy: test for None)
        dt = np.dtype(declared if declared is not None else cai["typestr"])
        if dt.kind == "V" and declared is None:
            raise NbkernelsError(
                f"{name}: its __cuda_array_interface__ typestr {cai['typestr']!r} does not say "
                "which 16-bit type it holds; pass a CuPy array or a torch tensor instead")
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape)))
        else:
            strides = _elem_strides(strides, dt.itemsize, name)
        ptr = int(cai["data"][0] or 0)
        dev = _device_of_pointer(ptr) if ptr else None
        return ArrayView(ptr, shape, strides, dt, fw, dev, obj,
                         stream=_producer_stream(cai, name), readonly=bool(cai["data"][1]))
    raise NbkernelsError(
        f"{name}: expected a NumPy, CuPy or torch array or an object with "
        f"__cuda_array_interface__ or DLPack, got {type(obj).__name__}")


# --- arrays of other frameworks, through DLPack ---------------------------------------------------
#: DLPack device types (dlpack.h DLDeviceType): host memory, and CUDA device memory
_DL_CPU, _DL_CUDA = 1, 2


def via_dlpack(x) -> bool:
    """Whether ``x`` is read through DLPack (``__dlpack__`` and ``__dlpack_device__``): an
    array of a framework nbkernels does not read natively (not NumPy, CuPy, torch or numba:
    JAX, Paddle, ...), with or without ``__cuda_array_interface__``. Through DLPack its results
    come back in its own framework, and the producer's pending work is ordered before the
    call for every dtype (JAX offers the array interface for some dtypes only)."""
    return (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")
            and _framework(x) in ("unknown", "cai"))


def _from_dlpack(x, name: str):
    """``x``'s memory, without a copy, as an array nbkernels reads: NumPy for host memory,
    CuPy (else torch) for GPU memory. Their ``from_dlpack`` passes the stream they work on,
    so the producer's pending writes are ordered before the call's kernels read."""
    kind, _ = x.__dlpack_device__()
    if kind == _DL_CPU:
        return np.from_dlpack(x)
    if kind != _DL_CUDA:
        raise NbkernelsError(f"{name}: its DLPack device type is {kind}; expected CUDA device "
                             f"memory ({_DL_CUDA}) or host memory ({_DL_CPU})")
    mod = _gpu_exchange()
    if mod is None:
        raise NbkernelsError(f"{name}: a DLPack array ({type(x).__name__}) on the GPU is read "
                             "through CuPy or torch; install one of them")
    return mod.from_dlpack(x)


def _gpu_exchange():
    """The package GPU arrays read through DLPack become: CuPy, else torch; None without
    either."""
    for name in ("cupy", "torch"):
        try:
            return __import__(name)
        except ImportError:
            pass
    return None


#: frameworks whose arrays must not be written in place (``out=`` is refused for them)
_IMMUTABLE = ("jax", "jaxlib")
#: packages whose array types live in another top-level module than their ``from_dlpack``
_DLPACK_HOME = {"jaxlib": "jax"}


def _to_framework(result, like):
    """``result`` (a NumPy, CuPy or torch array) handed to the framework of ``like`` through
    its own ``from_dlpack`` (its package's ``from_dlpack``, ``numpy.from_dlpack``,
    ``dlpack.from_dlpack`` or ``utils.dlpack.from_dlpack``: JAX, Paddle, ...), without a copy;
    as it is where the package has none."""
    import importlib
    import sys

    root = type(like).__module__.split(".")[0]
    root = _DLPACK_HOME.get(root, root)
    mod = sys.modules.get(root)
    if mod is None:
        try:
            mod = importlib.import_module(root)
        except ImportError:
            return result
    for path in (("from_dlpack",), ("numpy", "from_dlpack"), ("dlpack", "from_dlpack"),
                 ("utils", "dlpack", "from_dlpack")):
        fn = mod
        for part in path:
            fn = getattr(fn, part, None)
        if callable(fn):
            return fn(result)
    return result


def call_with_dlpack(fn, args: tuple, kw: dict):
    """``fn(*args, **kw)`` with each array read through DLPack (:func:`via_dlpack`) among the
    arguments exchanged for an array on the same memory (:func:`_from_dlpack`; ``out`` arrays
    are then written in place),
    and the results given back in the framework of the first such argument: an ``out`` as the
    very object passed, a new array through that framework's ``from_dlpack``."""
    swapped, keep, like = {}, [], None

    def conv(name, x):
        nonlocal like
        if not via_dlpack(x):
            return x
        if name in ("out", "residual_out") and \
                type(x).__module__.split(".")[0] in _IMMUTABLE:
            raise NbkernelsError(f"{name}: {type(x).__name__} arrays are immutable; call "
                                 f"without {name}= and use the returned array")
        new = _from_dlpack(x, name)
        keep.append(new)
        swapped[id(new)] = x
        like = x if like is None else like
        return new

    def back(r):
        if id(r) in swapped:
            return swapped[id(r)]
        if isinstance(r, (tuple, list)):
            return type(r)(back(x) for x in r)
        return r if like is None or r is None or np.isscalar(r) else _to_framework(r, like)

    with _dlpack_stream(args, kw):
        args = tuple(conv(f"argument {i}", x) for i, x in enumerate(args))
        kw = {k: conv(k, x) for k, x in kw.items()}
        return back(fn(*args, **kw))


def _dlpack_stream(args, kw):
    """With ``stream=``, that stream made CuPy's (else torch's) current one on the device of
    the first GPU array read through DLPack (:func:`on_stream`), for the whole exchange: the
    ``from_dlpack`` that reads an argument passes the current stream, so the producer orders
    its pending writes before that stream's work (the call's kernels), and a result handed
    back makes its consumer wait for that stream, where the call's kernels ran. Without
    ``stream=`` the current stream is already the call's."""
    stream = kw.get("stream")
    if stream is None:
        return contextlib.nullcontext()
    for x in (*args, *kw.values()):
        if via_dlpack(x):
            kind, dev = x.__dlpack_device__()
            mod = _gpu_exchange()
            if kind != _DL_CUDA or mod is None:  # (_from_dlpack says what is wrong)
                return contextlib.nullcontext()
            return on_stream(mod.__name__, int(dev), stream)
    return contextlib.nullcontext()


def span(shape, strides, itemsize: int) -> tuple:
    """(lowest, highest + 1) byte offset from element (0, ..., 0) of an array with these
    element ``strides``: the address range it touches (empty arrays: (0, 0))."""
    if any(d == 0 for d in shape):
        return 0, 0
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    return lo * itemsize, (hi + 1) * itemsize


def may_overlap(v: ArrayView, w: ArrayView) -> bool:
    """Whether two arrays may share memory: their address ranges intersect (host arrays: NumPy's
    ``may_share_memory``). Interleaved arrays count as overlapping; empty ones never do."""
    if v.size == 0 or w.size == 0:
        return False
    if v.host or w.host:
        return v.host and w.host and bool(np.may_share_memory(v.obj, w.obj))
    if v.device != w.device:
        return False
    (vlo, vhi), (wlo, whi) = span(v.shape, v.strides, v.dtype.itemsize), \
        span(w.shape, w.strides, w.dtype.itemsize)
    return v.ptr + vlo < w.ptr + whi and w.ptr + wlo < v.ptr + vhi


def same_elements(v: ArrayView, w: ArrayView) -> bool:
    """Whether ``v`` and ``w`` are the same elements at the same addresses (one array passed
    twice, or two views of it with equal start, shape and strides)."""
    if v.shape != w.shape or v.strides != w.strides or v.dtype.itemsize != w.dtype.itemsize:
        return False
    if v.host or w.host:
        return v.host and w.host and \
            v.obj.__array_interface__["data"][0] == w.obj.__array_interface__["data"][0]
    return v.ptr == w.ptr and v.device == w.device


def _offset_in_owner(x: np.ndarray) -> int:
    owner = x
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return x.__array_interface__["data"][0] - owner.__array_interface__["data"][0]


def contiguous_like(v: ArrayView) -> ArrayView:
    """The view a C-contiguous copy of ``v`` would have (host arrays copied to a GPU)."""
    strides, acc = [], 1
    for d in reversed(v.shape):
        strides.append(acc)
        acc *= int(d)
    return ArrayView(0, v.shape, tuple(reversed(strides)), v.dtype, v.framework, v.device, v.obj,
                     host=True)


def _device_of_pointer(ptr: int):
    try:
        from cuda.bindings import driver as drv

        err, dev = drv.cuPointerGetAttribute(
            drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if err == drv.CUresult.CUDA_SUCCESS:
            return int(dev)
    except Exception:
        pass
    return None


def device_of(obj) -> int | None:
    """The CUDA device ordinal that ``obj`` (a CuPy array, torch tensor or object with
    ``__cuda_array_interface__``) lives on; None for host arrays and anything else (the
    call's own checks then say what is wrong with it)."""
    try:
        fw = _framework(obj)
        if fw == "cupy":
            return int(obj.data.device_id)
        if fw == "torch":
            return int(obj.device.index) if obj.is_cuda else None
        if fw in ("numba", "cai"):
            ptr = int(obj.__cuda_array_interface__["data"][0] or 0)
            return _device_of_pointer(ptr) if ptr else None
    except Exception:
        return None
    return None


def _driver():
    from cuda.bindings import driver as drv

    return drv


def current_device() -> int | None:
    """The device of the calling thread's current CUDA context; None where none is current."""
    try:
        drv = _driver()
        err, dev = drv.cuCtxGetDevice()
    except Exception:
        return None
    return int(dev) if err == drv.CUresult.CUDA_SUCCESS else None


_PRIMARY: dict = {}  # device ordinal -> its primary CUcontext (retained once, for the process)


def _primary_context(device: int):
    ctx = _PRIMARY.get(device)
    if ctx is None:
        drv = _driver()
        err, ctx = drv.cuDevicePrimaryCtxRetain(device)
        if err != drv.CUresult.CUDA_SUCCESS:
            raise NbkernelsError(f"GPU {device}: its primary context could not be made current "
                                 f"({err.name})")
        ctx = _PRIMARY.setdefault(device, ctx)
    return ctx


class DeviceScope:
    """Makes ``device``'s primary context current (as ``cudaSetDevice`` does, and CuPy's and
    torch's device guards: the top of the thread's context stack is replaced) and puts the
    previous one back on exit. One object per call: it holds that call's previous context."""

    __slots__ = ("device", "prev")

    def __init__(self, device: int):
        self.device, self.prev = device, None

    def __enter__(self):
        drv = _driver()
        ctx = _primary_context(self.device)
        err, self.prev = drv.cuCtxGetCurrent()
        err = drv.cuCtxSetCurrent(ctx)[0]
        if err != drv.CUresult.CUDA_SUCCESS:
            raise NbkernelsError(f"GPU {self.device}: could not make its context current "
                                 f"({err.name})")
        return self

    def __exit__(self, *exc):
        _driver().cuCtxSetCurrent(self.prev)


def on_device(device: int | None):
    """A context in which ``device`` (the arrays' GPU) is the current one: kernels load and
    launch there, and the frameworks allocate and pick their current stream there. A no-op
    where it already is current, or for host arrays (None)."""
    if device is None or current_device() == device:
        return contextlib.nullcontext()
    return DeviceScope(device)


def stream_device(handle: int) -> int | None:
    """The device a raw stream handle belongs to; None for the default streams (handles 0, 1
    and 2: the current device's) and where the driver cannot say."""
    if handle in (0, 1, 2):
        return None
    try:
        drv = _driver()
        s = drv.CUstream(handle)
        err, dev = drv.cuStreamGetDevice(s)  # CUDA 12.8+
        if err == drv.CUresult.CUDA_SUCCESS:
            return int(dev)
        err, ctx = drv.cuStreamGetCtx(s)
        if err != drv.CUresult.CUDA_SUCCESS:
            return None
        drv.cuCtxPushCurrent(ctx)
        try:
            err, dev = drv.cuCtxGetDevice()
        finally:
            drv.cuCtxPopCurrent()
        return int(dev) if err == drv.CUresult.CUDA_SUCCESS else None
    except Exception:
        return None


def check_stream_device(handle: int, device: int | None) -> int:
    """``handle``, after checking that a given stream is on the arrays' ``device``."""
    if device is not None:
        on = stream_device(handle)
        if on is not None and on != device:
            raise NbkernelsError(f"stream: is a stream of GPU {on}, but the arrays are on GPU "
                                 f"{device}; pass a stream of GPU {device} (or none: the "
                                 "current stream there)")
    return handle


def on_stream(framework: str, device: int | None, stream):
    """A context that makes ``stream`` (a ``stream=`` argument) the current stream of the
    framework (CuPy or torch) while a call runs. The call's temporaries (operand copies,
    split-K and split-tail workspaces) then come from that stream's pool and its copies run on
    that stream, ordered before the kernels that read them; freed when the call returns, they
    are reused only by later work on the same stream. Without it they came from the current
    stream's pool and could be reused there while the kernel still ran on ``stream``. No-op
    for other frameworks and where ``stream`` is already current."""
    handle = current_stream_handle(framework, device, stream)
    own = type(stream).__module__.split(".")[0] == framework  # the framework's own stream
    if framework == "cupy":
        import cupy

        if handle == cupy.cuda.get_current_stream().ptr:
            return contextlib.nullcontext()
        if own or not handle:
            return stream if own else cupy.cuda.Stream.null
        with warnings.catch_warnings():  # (CuPy 14 deprecates it for the stream protocol)
            warnings.simplefilter("ignore", DeprecationWarning)
            return cupy.cuda.ExternalStream(handle, device)
    if framework == "torch":
        import torch

        if handle == torch.cuda.current_stream(device).cuda_stream:
            return contextlib.nullcontext()
        if own:
            return torch.cuda.stream(stream)
        if not handle:
            return torch.cuda.stream(torch.cuda.default_stream(device))
        wrap = getattr(torch.cuda, "get_stream_from_external", None) or torch.cuda.ExternalStream
        return torch.cuda.stream(wrap(handle, torch.device("cuda", device)))
    return contextlib.nullcontext()


def raw_handle(stream) -> int:
    """The raw CUstream of a ``stream=`` argument: a CuPy, torch or numba stream, or a handle."""
    for attr in ("ptr", "cuda_stream", "handle"):
        if hasattr(stream, attr):
            h = getattr(stream, attr)
            h = getattr(h, "value", h)
            return int(h or 0)
    if isinstance(stream, int):
        return stream
    raise NbkernelsError(
        f"stream: expected a CuPy, torch or numba stream or a raw handle, got {type(stream)}")


def check_writable(v: ArrayView, name: str, who: str | None = None) -> None:
    """Refuse an output the caller's array marks read-only, before anything runs."""
    if v.readonly:
        how = "flags.writeable is False" if v.framework == "numpy" else \
            "its __cuda_array_interface__ data is marked read-only"
        raise NbkernelsError(f"{who + ': ' if who else ''}{name} is read-only ({how}); expected "
                             "a writable array")


def _producer_stream(cai: dict, name: str) -> int | None:
    """The ``stream`` entry of a CUDA Array Interface (v3): None (nothing to wait for), or the
    raw handle of the stream the data is produced on (1 and 2 are the legacy and per-thread
    default streams). 0 is disallowed by the protocol (it could mean either); it is read as
    the legacy default stream, the one that waits for the most."""
    s = cai.get("stream")
    if s is None:
        return None
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
        raise NbkernelsError(f"{name}: its __cuda_array_interface__ 'stream' must be None or an "
                             f"integer stream handle, got {s!r}")
    return int(s) or 1


def _same_stream(a: int, b: int) -> bool:
    return a == b or {a, b} == {0, 1}  # handle 0 is the legacy default stream, as 1 names it


def await_producers(handle: int, named_views) -> None:
    """Order the stream ``handle`` (the one the call launches on) after the streams that
    CUDA-array-interface arguments name as their producers (``ArrayView.stream``): the
    protocol's consumer side. Each other stream gets an event recorded on it, which
    ``handle`` waits for: the GPU waits, the host does not (numba and CuPy synchronize the
    producer stream on the host instead). ``named_views``: ``(name, view)`` pairs, views
    None allowed. ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0`` turns it off, as it turns off numba's
    own wait."""
    pending = []
    for name, v in named_views:
        s = None if v is None else v.stream
        if s is not None and not _same_stream(s, handle) and all(s != p for _, p in pending):
            pending.append((name, s))
    if not pending or os.environ.get("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", "1").strip() == "0":
        return
    drv = _driver()
    ok = drv.CUresult.CUDA_SUCCESS
    err, event = drv.cuEventCreate(drv.CUevent_flags.CU_EVENT_DISABLE_TIMING)
    if err != ok:
        raise NbkernelsError(f"could not create a CUDA event to wait for an argument's stream: "
                             f"{err!r}")
    try:
        for name, s in pending:
            (err,) = drv.cuEventRecord(event, drv.CUstream(s))
            if err == ok:  # the wait takes the event's state now: the event can be recorded again
                (err,) = drv.cuStreamWaitEvent(drv.CUstream(handle), event, 0)
            if err != ok:
                raise NbkernelsError(
                    f"{name}: its __cuda_array_interface__ names stream {s:#x} as its producer; "
                    f"expected a stream the call's stream {handle:#x} can wait for (one of the "
                    f"same GPU, alive), got {err!r}")
    finally:
        drv.cuEventDestroy(event)


def current_stream_handle(framework: str, device: int | None, stream=None) -> int:
    """The raw CUstream to launch on: ``stream`` if given (checked to be on ``device``, the
    arrays' GPU), else the framework's current one."""
    if stream is not None:
        return check_stream_device(raw_handle(stream), device)
    if framework == "cupy":
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)
    if framework == "torch":
        import torch

        return int(torch.cuda.current_stream(device).cuda_stream)
    return 0
