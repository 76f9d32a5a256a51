"""The pieces every repeat call runs, shared by ``nbkernels.gemm`` and the row kernels.

A repeat call (same dtypes, shapes, strides, alignment and switches as an earlier call) reads a
key from its arrays' attributes, allocates its outputs, writes the new pointers into a recorded
argument block and launches. For a small call these few microseconds are the call, so each
piece here is measured against the alternatives on the device machine (perf-notes r9):

* :func:`desc`: one array's key and data pointer, for CuPy arrays and CUDA torch tensors only;
  the array type is classified once and remembered, so a call pays a dict lookup, not a module
  name test.
* :class:`EnvSwitches`: a fingerprint of the ``NBKERNELS_*`` switches a launch depends on.
  ``os.environ.get`` of an unset name costs ~0.6 us (a raised and caught KeyError); reading
  the mapping's underlying dict costs a tenth of that, and a switch set later is still seen.
* :func:`framework_ops`: for one framework and device, an output from the framework's
  allocator and its pointer (without CuPy's device context manager when that device is
  already current), and the current stream as a raw handle
  (``torch.cuda.current_stream().cuda_stream`` costs ~8 us, torch's raw-stream query, the one
  Triton's launcher uses, well under one). :func:`stream_handle` finds the stream from an
  array.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os

from . import arrays
from .arrays import current_stream_handle, torch_dtype_of

OTHER, CUPY, TORCH = 0, 1, 2
_KINDS: dict = {}  # array type -> OTHER / CUPY / TORCH
#: the array types classified CUPY and TORCH: the row ops' generated keys read these inline
#: (perf-notes h9)
CUPY_TYPES: set = set()
TORCH_TYPES: set = set()
_mods: dict = {}  # "cupy", "torch" -> the module, once an array of it was seen


def _classify(t) -> int:
    mod = getattr(t, "__module__", None) or ""
    kind = OTHER
    if mod.startswith("cupy"):
        import cupy

        if issubclass(t, cupy.ndarray):
            _mods["cupy"], kind = cupy, CUPY
            CUPY_TYPES.add(t)
    elif mod.startswith("torch"):
        import torch

        if issubclass(t, torch.Tensor):
            _mods["torch"], kind = torch, TORCH
            TORCH_TYPES.add(t)
            _mods["torch_raw_stream"] = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if len(_KINDS) > 64:
        _KINDS.clear()
    _KINDS[t] = kind
    return kind


@contextlib.contextmanager
def read_as_cupy(t):
    """Within this block, arrays of type ``t`` (a stand-in with CuPy's attributes: tests, the
    CPU host benchmark) are read as CuPy arrays by :func:`desc` and the row ops' keys."""
    _KINDS[t] = CUPY
    CUPY_TYPES.add(t)
    try:
        yield
    finally:
        _KINDS.pop(t, None)
        CUPY_TYPES.discard(t)


def kind_of(x) -> int:
    k = _KINDS.get(type(x))
    return _classify(type(x)) if k is None else k


def desc(x):
    """``(key, data pointer)`` of a CuPy array or a CUDA torch tensor, read from its attributes
    alone; None for anything else. The key holds everything a launch depends on except the
    pointer: framework, dtype, shape, strides, the pointer's 16-byte alignment, the device."""
    k = _KINDS.get(type(x))
    if k is None:
        k = _classify(type(x))
    if k == CUPY:
        mem = x.data
        ptr = mem.ptr
        return (CUPY, x.dtype, x.shape, x.strides, ptr & 15, mem.device_id), ptr
    if k == TORCH and x.is_cuda:
        ptr = x.data_ptr()
        return (TORCH, x.dtype, x.shape, x.stride(), ptr & 15, x.get_device()), ptr
    return None


DECLINED = object()  # what a generated replay returns for a call it leaves to the full path


def meet_bounds(out_span, other_span):
    """``(lo, hi)``: arrays whose bytes lie at these spans from their first elements
    (:func:`arrays.span`) share memory iff ``lo < out pointer - other pointer < hi``."""
    (olo, ohi), (ilo, ihi) = out_span, other_span
    return ilo - ohi, ihi - olo  # out + olo < other + ihi and other + ilo < out + ohi


def guard_source(out_ptr: str, other_ptr: str, lo: int, hi: int, allowed=None) -> list:
    """Source lines of a generated replay (one with ``DECLINED`` in its namespace) that return
    ``DECLINED`` where the output at pointer ``out_ptr`` meets the array at ``other_ptr``
    (expressions), bounds from :func:`meet_bounds`, at a difference other than ``allowed``
    (None: at any). A replay writes its output as the recorded call did; an output meeting an
    input otherwise (``out=x[1:]`` for ``x[:-1]``) is left to the full path, which copies."""
    differs = "" if allowed is None else f" and d != {allowed}"
    return [f"    d = {out_ptr} - {other_ptr}", f"    if {lo} < d < {hi}{differs}:",
            "        return DECLINED"]


def alloc_statement(ns: dict, m: str, p: str, spec: str) -> str:
    """The statement of a generated replay that allocates an output or workspace ``m`` of
    ``(shape, dtype)`` given by the name ``spec`` in ``ns``, and sets ``p`` to its pointer:
    through ``ns["alloc"]`` (:func:`framework_ops`), or as its inline form where the
    framework has one (CuPy: one Python frame less)."""
    inline = getattr(ns["alloc"], "inline", None)
    if inline is None:
        return f"{m}, {p} = alloc(like, *{spec})"
    ns.update(inline[1])
    return inline[0].format(m=m, p=p, spec=spec)


def alloc_source(ns: dict, allocs) -> list:
    """Source lines of a generated replay (one whose arguments include ``like`` and
    ``stream``) that run the allocation statements ``allocs``: without ``stream=`` as they
    are, with it inside that stream's context (:func:`on_stream`), so the outputs and
    workspaces come from the given stream's pool, as the full path's do. Only the
    allocations: the launches name their stream themselves (:func:`launch_source`)."""
    if not allocs:
        return []
    ns["on_stream"] = on_stream
    return (["    if stream is None:"] + [f"        {a}" for a in allocs] +
            ["    else:", "        with on_stream(like, stream):"] +
            [f"            {a}" for a in allocs])


def launch_source(ns: dict, launches, first=()) -> list:
    """The end of a generated replay (one whose arguments include ``like`` and ``stream``, with
    ``lock`` and ``current`` in ``ns``): the stream's handle (the current one, or the given
    ``stream``'s), then under ``lock`` the lines ``first``, and per launch ``(go, writes)`` its
    argument writes ``[(ctypes slot, value expression)]`` and the launch ``go(handle)``.
    A slot that is a ctypes array (an argument passed by value: ``launch.by_value_params``)
    takes its bytes from the host address the expression gives. Binds the slots and launches
    into ``ns``."""
    ns["stream_handle"] = stream_handle
    ns["memmove"] = ctypes.memmove
    current = "current(like)"
    inline = getattr(ns["current"], "inline", None)
    if inline is not None:  # the framework's query as an expression (CuPy)
        current = inline[0]
        ns.update(inline[1])
    lines = [f"    h = {current} if stream is None else stream_handle(like, stream)",
             "    with lock:"] + [f"        {line}" for line in first]
    for n, (go, writes) in enumerate(launches):
        for j, (slot, value) in enumerate(writes):
            if isinstance(slot, ctypes.Array):
                ns[f"s{n}_{j}"] = ctypes.addressof(slot)  # the slot lives in go's packed block
                lines.append(f"        memmove(s{n}_{j}, {value}, {ctypes.sizeof(slot)})")
                continue
            ns[f"s{n}_{j}"] = slot
            lines.append(f"        s{n}_{j}.value = {value}")
        ns[f"go{n}"] = go  # (it also keeps its packed block alive)
        direct = getattr(go, "direct", None)
        if direct is None:
            lines.append(f"        go{n}(h)")
            continue
        # the bound launch's own call written out (launch.bind): one Python frame less
        ns[f"L{n}"], ns["launch_failed"] = direct[0], launch_failed
        consts = ", ".join(str(int(v)) for v in direct[1:9])
        lines += ["        try:", f"            L{n}({consts}, h, {int(direct[9])}, 0)",
                  "        except Exception as e:", "            raise launch_failed(e) from e"]
    return lines


def launch_failed(e):
    """The typed error of a failed launch (as :func:`launch.bind`'s)."""
    from .errors import NbkernelsError

    return NbkernelsError(f"cuLaunchKernel failed: {e}")


def device_source(ns: dict, ops, header: str, body: list) -> list:
    """A generated replay's source: ``header`` (its ``def`` line, with a ``stream``
    argument), a check that a given ``stream=`` is on the recorded device (a typed error
    otherwise, before anything is allocated or written), then the lines ``body`` (indented as
    a function body), run as they are where the recorded device is the current one
    (``ops[2]()``, the framework's cheap query), else inside :class:`arrays.DeviceScope` of
    that device (``ops[3]``): a call on arrays of another GPU than the current one loads and
    launches its kernels there, as the full path does."""
    device = ops[3]
    ns["here"], ns["DeviceScope"], ns["DEV"] = ops[2], arrays.DeviceScope, device
    ns["check_stream"] = lambda stream: arrays.check_stream_device(arrays.raw_handle(stream),
                                                                   device)
    here = "here()"
    inline = getattr(ops[2], "inline", None)
    if inline is not None:  # the framework's query as an expression (CuPy)
        here = inline[0]
        ns.update(inline[1])
    inner = ["    " + line for line in body]
    return ([header, "    if stream is not None:", "        check_stream(stream)",
             f"    if {here}:"] + inner + ["    with DeviceScope(DEV):"] + inner)


def compile_replay(lines, ns: dict):
    """``(fire, source)``: the function ``fire`` that the source ``lines`` define, executed in
    ``ns`` (its constants: slots, launches, allocators, bounds), and that source, kept for
    reading what a replay runs."""
    source = "\n".join(lines) + "\n"
    exec(source, ns)  # noqa: S102  (generated here from recorded launches, no user text)
    return ns["fire"], source


class EnvSwitches:
    """A cheap fingerprint of some environment variables' values (for repeat-call keys: a
    switch set or cleared between calls gives another key). Reads the mapping under
    ``os.environ`` directly where it is CPython's ``_Environ``, else ``os.environ.get``."""

    def __init__(self, *names: str):
        self.names = names
        env = os.environ
        self._env = env
        self._data = getattr(env, "_data", None)
        encode = getattr(env, "encodekey", None)
        if not isinstance(self._data, dict) or encode is None:
            self._data = None
        else:
            self._keys = tuple(encode(n) for n in names)
            self._keyset = frozenset(self._keys)
            self._live = self._data.keys()  # a live view: one C call tells "none of them set"

    def values(self) -> tuple:
        """``()`` while none of the names is set (the common case, one C-level test), else
        their values in order."""
        if self._data is not None and os.environ is self._env:
            if self._live.isdisjoint(self._keyset):
                return ()
            return tuple(map(self._data.get, self._keys))
        vals = tuple(map(os.environ.get, self.names))
        return () if vals.count(None) == len(vals) else vals


_OPS: dict = {}


def framework_ops(kind: int, device: int):
    """``(alloc, current, here, device)`` for repeat calls on arrays of one framework
    (``CUPY`` or ``TORCH``, already seen by :func:`desc`) on one device, all fixed when the
    call was recorded (its key holds them): ``alloc(like, shape, dtype) -> (array, data
    pointer)``, an uninitialised output from the framework's allocator on that device;
    ``current(like)``, the raw handle of the framework's current stream there; ``here()``,
    whether that device is the current one (the framework's own query).
    Looked up once per recorded call, so a replay pays no framework test."""
    ops = _OPS.get((kind, device))
    if ops is not None:
        return ops
    if kind == CUPY:
        cupy = _mods["cupy"]
        get_device, ndarray, on_device = cupy.cuda.runtime.getDevice, cupy.ndarray, cupy.cuda.Device
        get_stream = cupy.cuda.get_current_stream

        def alloc(like, shape, dtype):
            if get_device() == device:
                x = ndarray(shape, dtype)  # what cupy.empty calls, one Python frame less
            else:
                with on_device(device):
                    x = ndarray(shape, dtype)
            return x, x.data.ptr

        def current(like):
            return get_stream().ptr

        def here():
            return get_device() == device

        # the same three as lines of a generated replay, one Python frame less each
        # (perf-notes h9): its allocations run where the device is current (``here()``, or
        # inside the device's scope), so they call CuPy's ndarray directly
        alloc.inline = ("{m} = cupy_ndarray(*{spec}); {p} = {m}.data.ptr",
                        {"cupy_ndarray": ndarray})
        current.inline = ("cupy_stream().ptr", {"cupy_stream": get_stream})
        here.inline = (f"cupy_device() == {int(device)}", {"cupy_device": get_device})
    elif kind == TORCH:
        raw = _mods["torch_raw_stream"]
        torch = _mods["torch"]

        def alloc(like, shape, dtype):
            x = like.new_empty(shape, dtype=torch_dtype_of(dtype))
            return x, x.data_ptr()

        def current(like):
            if raw is not None:  # the query Triton's launcher uses; ~8 us less than the public one
                return raw(device)
            return int(torch.cuda.current_stream(like.device).cuda_stream)

        # torch's query (cudaGetDevice, or the device c10 will set once its context exists:
        # never ours, whose context exists, so a wrong answer only costs a needless switch);
        # else the driver's. 0.1 us against the driver's 0.3-0.6 (perf-notes h7).
        get_index = getattr(torch._C, "_cuda_getDevice", None)
        if get_index is not None:
            def here():
                return get_index() == device
        else:
            ctx_device = arrays._driver().cuCtxGetDevice

            def here():
                err, dev = ctx_device()
                return not err and int(dev) == device  # (CUDA_SUCCESS is 0)
    else:
        raise ValueError(f"framework_ops: kind must be CUPY or TORCH, got {kind}")
    ops = _OPS[(kind, device)] = (alloc, current, here, device)
    return ops


def on_stream(like, stream):
    """:func:`arrays.on_stream` for the framework and device of ``like`` (a CuPy array or a
    CUDA torch tensor); a no-op context for anything else."""
    k = kind_of(like)
    if k == CUPY:
        return arrays.on_stream("cupy", like.data.device_id, stream)
    if k == TORCH and like.is_cuda:
        return arrays.on_stream("torch", like.get_device(), stream)
    return contextlib.nullcontext()


def stream_ordered(like: int, name: str):
    """Decorator for a public call with a ``stream=`` keyword. DLPack-only arrays among its
    arguments are exchanged first (:func:`arrays.call_with_dlpack`). The call runs on the GPU of the
    argument at position ``like`` or keyword ``name`` (:func:`arrays.on_device`: that device
    made current where another one is); when a stream is given, with it as its framework's
    current stream (:func:`arrays.on_stream`), so that its copies and temporaries are ordered
    with its kernels on that stream."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, stream=None, **kw):
            if any(map(arrays.via_dlpack, args)) or any(map(arrays.via_dlpack, kw.values())):
                return arrays.call_with_dlpack(call, args, dict(kw, stream=stream))
            x = args[like] if len(args) > like else kw.get(name)
            with arrays.on_device(arrays.device_of(x)):
                if stream is None:
                    return fn(*args, **kw)
                with on_stream(x, stream):
                    return fn(*args, stream=stream, **kw)
        return call
    return wrap


def stream_handle(like, stream=None) -> int:
    """The raw CUstream a repeat call launches on: ``stream`` if given, else the current
    stream of ``like``'s framework (for torch, of ``like``'s device)."""
    if stream is not None:
        return current_stream_handle("", None, stream)
    if kind_of(like) == CUPY:
        return framework_ops(CUPY, like.data.device_id)[1](like)
    return framework_ops(TORCH, like.get_device())[1](like)
