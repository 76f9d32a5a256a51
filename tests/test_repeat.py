"""The repeat-call pieces (nbkernels.repeat) and the row replay on CPU: keys change with
everything a launch depends on, environment switches set between calls are seen, and a replay
writes each call's own pointers, scalars and fresh outputs into the recorded argument block.
CuPy-like stand-ins are registered as CuPy arrays (no GPU or CuPy needed)."""
import ctypes
import os
import threading
from unittest import mock

import numpy as np
import pytest

from nbkernels import arrays, launch, repeat
from nbkernels.errors import NbkernelsError
from nbkernels.rows import host


class Mem:
    def __init__(self, ptr, device_id=0):
        self.ptr, self.device_id = ptr, device_id


class FakeCupy:
    """The attributes repeat.desc reads from a CuPy array."""

    def __init__(self, shape, dtype=np.float32, ptr=1 << 20, device=0, strides=None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.strides = strides or tuple(int(np.prod(shape[i + 1:])) * self.dtype.itemsize
                                        for i in range(len(shape)))
        self.data = Mem(ptr, device)


def fops(alloc, current, here=lambda: True, device=0):
    """A replay's framework ops (:func:`repeat.framework_ops`): ``(alloc, current, here,
    device)``, on the current device unless ``here`` says otherwise."""
    return (alloc, current, here, device)


def recording_device(events):
    """A stand-in for a device context (``arrays.DeviceScope(d)``, ``cupy.cuda.Device(d)``)
    that appends ``("enter", d)`` and ``("exit", d)`` to ``events``."""
    class Device:
        def __init__(self, d):
            self.d = d

        def __enter__(self):
            events.append(("enter", self.d))

        def __exit__(self, *exc):
            events.append(("exit", self.d))

    return Device


def recording_context(events):
    """A stand-in for ``repeat.on_stream(like, stream)`` that appends ``("enter", like,
    stream)`` and ``("exit", like, stream)`` to ``events``."""
    class Ctx:
        def __init__(self, like, stream):
            self.args = (like, stream)

        def __enter__(self):
            events.append(("enter",) + self.args)

        def __exit__(self, *exc):
            events.append(("exit",) + self.args)

    return Ctx


@pytest.fixture(autouse=True)
def fake_kind():
    with repeat.read_as_cupy(FakeCupy):
        yield


def test_desc_keys_what_a_launch_depends_on():
    base = repeat.desc(FakeCupy((4, 64)))
    assert base[1] == 1 << 20
    assert repeat.desc(FakeCupy((4, 64), ptr=(1 << 20) + 4096))[0] == base[0]  # pointer only
    for other in (FakeCupy((4, 32)), FakeCupy((4, 64), np.float16),
                  FakeCupy((4, 64), strides=(512, 4)), FakeCupy((4, 64), ptr=(1 << 20) + 8),
                  FakeCupy((4, 64), device=1)):
        assert repeat.desc(other)[0] != base[0]


class FakeTorch:
    """The attributes repeat.desc reads from a torch tensor."""

    def __init__(self, shape, ptr=1 << 20, device=0, cuda=True, stride=None):
        self.shape, self.dtype, self.is_cuda = tuple(shape), "torch.bfloat16", cuda
        self._stride = stride or tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
        self._ptr, self._device = ptr, device

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def get_device(self):
        return self._device


@pytest.fixture
def fake_torch():
    repeat._KINDS[FakeTorch] = repeat.TORCH
    repeat.TORCH_TYPES.add(FakeTorch)
    yield
    repeat._KINDS.pop(FakeTorch, None)
    repeat.TORCH_TYPES.discard(FakeTorch)


def test_row_key_reads_each_array_as_desc_does(fake_torch):
    """The generated row key (``key_function``, perf-notes h9) reads each CuPy array and
    CUDA torch tensor inline into what ``repeat.desc`` gives, field for field (the replay's
    overlap checks read desc again), and declines anything else."""
    arrays = [FakeCupy((4, 64)), FakeCupy((4, 64), np.float16, ptr=(1 << 20) + 8, device=1),
              FakeCupy((4, 64), strides=(512, 4)), FakeTorch((4, 64)),
              FakeTorch((4, 64), ptr=(1 << 20) + 2, device=2, stride=(128, 1))]
    key_fn = host.key_function("t", ("x", "out"))
    for x in arrays:
        key, ptrs = key_fn((x, None), ())
        assert key[1:3] == (repeat.desc(x)[0], None) and ptrs == (repeat.desc(x)[1], None)
    for other in (np.zeros((4, 64)), FakeTorch((4, 64), cuda=False), [1, 2]):
        assert key_fn((other, None), ()) == (None, None)
        assert key_fn((FakeCupy((4, 64)), other), ()) == (None, None)


#: calls of one op (x, weight, out) that differ from the first in one thing a launch depends on
_VARIANTS = {
    "base": lambda: (FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 24),
                     FakeCupy((8, 64), ptr=1 << 28)),
    "other pointers": lambda: (FakeCupy((8, 64), ptr=1 << 21), FakeCupy((64,), ptr=1 << 25),
                               FakeCupy((8, 64), ptr=1 << 29)),
    "dtype": lambda: (FakeCupy((8, 64), np.float16), FakeCupy((64,), ptr=1 << 24),
                      FakeCupy((8, 64), ptr=1 << 28)),
    "shape": lambda: (FakeCupy((4, 64)), FakeCupy((64,), ptr=1 << 24),
                      FakeCupy((8, 64), ptr=1 << 28)),
    "strides": lambda: (FakeCupy((8, 64), strides=(512, 4)), FakeCupy((64,), ptr=1 << 24),
                        FakeCupy((8, 64), ptr=1 << 28)),
    "alignment": lambda: (FakeCupy((8, 64), ptr=(1 << 20) + 4), FakeCupy((64,), ptr=1 << 24),
                          FakeCupy((8, 64), ptr=1 << 28)),
    "device": lambda: (FakeCupy((8, 64), device=1), FakeCupy((64,), ptr=1 << 24),
                       FakeCupy((8, 64), ptr=1 << 28)),
    "no out": lambda: (FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 24), None),
    "no weight": lambda: (FakeCupy((8, 64)), None, FakeCupy((8, 64), ptr=1 << 28)),
    "in place": lambda: (FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 24), FakeCupy((8, 64))),
    "weight is out": lambda: (FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 28),
                              FakeCupy((8, 64), ptr=1 << 28)),
}


def test_row_key_tells_calls_apart_by_all_but_their_pointers(fake_torch):
    """Two calls share a key exactly when they differ in nothing but their pointers: every
    field of every array, which arrays are given, which share memory and the framework each
    give another key."""
    key_fn = host.key_function("t", ("x", "weight", "out"))
    variants = dict(_VARIANTS, torch=lambda: (FakeTorch((8, 64)), FakeCupy((64,), ptr=1 << 24),
                                              FakeCupy((8, 64), ptr=1 << 28)))
    keys = {k: key_fn(make(), (float,))[0] for k, make in variants.items()}
    for a in variants:
        for b in variants:
            same = a == b or {a, b} == {"base", "other pointers"}
            assert (keys[a] == keys[b]) is same, (a, b)


def test_desc_declines_everything_else():
    assert repeat.desc(np.zeros(4)) is None
    assert repeat.desc([1, 2]) is None
    assert repeat.kind_of(np.zeros(4)) == repeat.OTHER


def test_env_switches_see_changes_between_calls(monkeypatch):
    sw = repeat.EnvSwitches("NBK_TEST_SWITCH_A", "NBK_TEST_SWITCH_B")
    monkeypatch.delenv("NBK_TEST_SWITCH_A", raising=False)
    monkeypatch.delenv("NBK_TEST_SWITCH_B", raising=False)
    unset = sw.values()
    monkeypatch.setenv("NBK_TEST_SWITCH_A", "1")
    one = sw.values()
    monkeypatch.setenv("NBK_TEST_SWITCH_A", "2")
    two = sw.values()
    assert len({unset, one, two}) == 3
    monkeypatch.delenv("NBK_TEST_SWITCH_A")
    assert sw.values() == unset
    monkeypatch.setenv("NBK_TEST_SWITCH_B", "2")  # the second name alone, same value as "two"
    b_only = sw.values()
    assert b_only not in (unset, one, two)
    monkeypatch.setenv("NBK_TEST_SWITCH_A", "")  # set but empty is not unset
    assert sw.values() not in (unset, one, two, b_only)


def test_env_switches_follow_a_replaced_environ(monkeypatch):
    sw = repeat.EnvSwitches("NBK_TEST_SWITCH_A")
    monkeypatch.setattr(os, "environ", {"NBK_TEST_SWITCH_A": "x"})
    assert sw.values() == ("x",)


def test_row_key_changes_with_switches_aliasing_and_target(monkeypatch):
    monkeypatch.delenv("NBKERNELS_ROWS_LOOP", raising=False)
    monkeypatch.delenv("NBKERNELS_SPLIT_PASSES", raising=False)
    key_fn = host.key_function("rms_norm", ("x", "weight", "out"))
    x, w, out = FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 24), FakeCupy((8, 64), ptr=1 << 28)
    args = (x, w, out)
    key, ptrs = key_fn(args, (float, None))
    assert ptrs == (1 << 20, 1 << 24, 1 << 28)
    monkeypatch.setenv("NBKERNELS_ROWS_LOOP", "2")
    assert key_fn(args, (float, None))[0] != key
    monkeypatch.delenv("NBKERNELS_ROWS_LOOP")
    assert key_fn(args, (float, None))[0] == key
    monkeypatch.setenv("NBKERNELS_SPLIT_PASSES", "2")  # softmax's split rows: two passes
    assert key_fn(args, (float, None))[0] != key
    monkeypatch.delenv("NBKERNELS_SPLIT_PASSES")
    assert key_fn(args, (np.float32, None))[0] != key  # the op's own extra: eps's type here
    in_place, _ = key_fn((x, w, x), (float, None))
    assert in_place != key
    with host.target_arch("sm_75"):
        assert key_fn(args, (float, None))[0] != key
    assert key_fn((x, np.zeros(64), None), (float, None)) == (None, None)


@pytest.mark.parametrize("kind", ["cupy", "torch"])
def test_row_key_classifies_an_array_type_on_its_first_call(kind):
    """An array type no call has shown yet is classified once (``repeat.kind_of``, which
    files CuPy and torch types in the sets the key reads) and the call gets the key it would
    have had; its later calls are read inline."""
    class Fresh(FakeCupy if kind == "cupy" else FakeTorch):
        pass

    key_fn = host.key_function("t", ("x", "out"))
    x = Fresh((4, 64))
    classified = []
    types_ = repeat.CUPY_TYPES if kind == "cupy" else repeat.TORCH_TYPES

    def classify(t):
        classified.append(t)
        repeat._KINDS[t] = repeat.CUPY if kind == "cupy" else repeat.TORCH
        return repeat._KINDS[t]

    try:
        with mock.patch.object(repeat, "_classify", classify):
            key, ptrs = key_fn((x, None), ())
            assert classified == [Fresh] and Fresh in types_ and ptrs == (1 << 20, None)
            assert key_fn((x, None), ()) == (key, ptrs) and classified == [Fresh]
        assert key[1] == repeat.desc(x)[0]
    finally:
        repeat._KINDS.pop(Fresh, None)
        types_.discard(Fresh)


def test_replay_writes_each_calls_pointers_scalars_and_outputs():
    """A recorded launch of (x, weight, out, eps) replayed on new arrays: every tagged slot
    of the packed block holds the new call's value when the launch is made."""
    packed = launch.PackedArgs([0, 0, 0, 0.0, 0], [launch.VOIDP] * 3 + [launch.F32, launch.I64])

    class Call:
        launches = [(("f", "fn"), (2, 1, 1), (256, 1, 1), 1024, packed,
                     [(0, "x"), (1, ("weight", 64)), (2, "out"), (3, "eps")])]
        allocs = [("out", (8, 64), np.dtype(np.float32))]

    made = FakeCupy((8, 64), ptr=0x7000)
    launched = []

    def fake_bind(fn, grid, block, smem, p):
        return lambda stream: launched.append((fn, grid, block, smem, stream,
                                               [s.value for s in p.slots]))

    x, w = FakeCupy((8, 64), ptr=0x1000), FakeCupy((64,), ptr=0x2000)
    named = {"x": x, "weight": w, "out": None}
    allocated = []

    def alloc(like, shape, dtype):
        allocated.append((like, shape, dtype))
        return made, 0x7000

    with mock.patch.object(launch, "bind", fake_bind):
        rep = host.Replay(Call(), ("out",), None, named, {"x": 0x1000, "weight": 0x2000},
                          fops(alloc, lambda like: 77), ("eps",))
        got = rep((x, w, None), (0x1000, 0x2000, None), (0.25,), None)
    assert allocated == [(x, (8, 64), np.dtype(np.float32))]
    assert got is made
    (fn, grid, block, smem, stream, slots), = launched
    assert (fn, grid, block, smem, stream) == (("f", "fn"), (2, 1, 1), (256, 1, 1), 1024, 77)
    assert slots[:4] == [0x1000, 0x2000 + 64, 0x7000, 0.25]


def test_replay_launches_on_a_given_stream_and_the_current_one_otherwise():
    """Without ``stream=`` a replay asks the framework's current stream (``ops[1]``); with it,
    the given stream's handle (a CuPy or torch stream, or a raw handle)."""
    import types

    packed = launch.PackedArgs([0, 0], [launch.VOIDP] * 2)

    class Call:
        launches = [(("f", "fn"), (1, 1, 1), (32, 1, 1), 0, packed, [(0, "x"), (1, "out")])]
        allocs = []

    launched = []
    x = FakeCupy((2, 64), ptr=0x1000)
    named = {"x": x, "out": x}
    with mock.patch.object(launch, "bind", lambda *a: lambda s: launched.append(s)):
        rep = host.Replay(Call(), ("out",), None, named, {"x": 0x1000, "out": 0x1000},
                          fops(None, lambda like: 5))
    assert rep.fire((x, x), (0x1000, 0x1000), (), None) is x
    assert rep.fire((x, x), (0x1000, 0x1000), (), types.SimpleNamespace(ptr=9)) is x
    assert rep.fire((x, x), (0x1000, 0x1000), (), 11) is x
    assert launched == [5, 9, 11]


def test_a_replay_runs_on_the_recorded_device_and_checks_a_given_stream(monkeypatch):
    """Where the recorded device is not the current one (``here()`` false), the replay runs
    inside that device's scope (allocation and launch both); where it is, without one. A
    given stream is checked against the recorded device before anything is allocated."""
    import types

    events = []

    Scope = recording_device(events)
    packed = launch.PackedArgs([0, 0], [launch.VOIDP] * 2)

    class Call:
        launches = [(("f", "fn"), (1, 1, 1), (32, 1, 1), 0, packed, [(0, "x"), (1, "out")])]
        allocs = [("out", (2, 64), np.dtype(np.float32))]

    def alloc(like, shape, dtype):
        events.append(("alloc", shape))
        return FakeCupy(shape, ptr=0x9000), 0x9000

    on = {"here": True}
    monkeypatch.setattr(arrays, "DeviceScope", Scope)
    monkeypatch.setattr(repeat, "on_stream", recording_context([]))  # (CuPy's stream pools)
    stream_dev = {}
    monkeypatch.setattr(arrays, "stream_device", lambda h: stream_dev.get(h))
    x = FakeCupy((2, 64), ptr=0x1000, device=1)
    named = {"x": x, "out": None}
    with mock.patch.object(launch, "bind",
                           lambda *a: lambda s: events.append(("launch", s))):
        rep = host.Replay(Call(), ("out",), None, named, {"x": 0x1000},
                          fops(alloc, lambda like: 5, lambda: on["here"], 1))
    rep.fire((x, None), (0x1000, None), (), None)
    assert events == [("alloc", (2, 64)), ("launch", 5)]
    events.clear()
    on["here"] = False
    rep.fire((x, None), (0x1000, None), (), None)
    assert events == [("enter", 1), ("alloc", (2, 64)), ("launch", 5), ("exit", 1)]
    events.clear()
    stream_dev[0x40] = 1  # a stream of the arrays' device: taken
    rep.fire((x, None), (0x1000, None), (), types.SimpleNamespace(ptr=0x40))
    assert events[-2:] == [("launch", 0x40), ("exit", 1)]
    events.clear()
    stream_dev[0x50] = 0  # a stream of another device: refused before anything happens
    with pytest.raises(NbkernelsError, match="stream: is a stream of GPU 0, but the arrays are "
                                             "on GPU 1"):
        rep.fire((x, None), (0x1000, None), (), types.SimpleNamespace(ptr=0x50))
    assert events == []


def test_framework_ops_allocate_on_the_recorded_device_and_read_its_stream(monkeypatch):
    """CuPy: an output on the array's device, inside a device context only where another
    device is current; the current stream's pointer. torch: ``new_empty`` like the array and
    the raw stream of the recorded device."""
    import types

    events = []

    Device = recording_device(events)
    current = {"device": 0}

    def ndarray(shape, dtype):
        events.append(("ndarray", shape))
        return FakeCupy(shape, dtype, ptr=0x4000)

    fake = types.SimpleNamespace(ndarray=ndarray, cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: current["device"]), Device=Device,
        get_current_stream=lambda: types.SimpleNamespace(ptr=0x77)))
    monkeypatch.setitem(repeat._mods, "cupy", fake)
    monkeypatch.setattr(repeat, "_OPS", {})
    alloc, cur, here, dev = repeat.framework_ops(repeat.CUPY, 1)
    current["device"] = 1
    x, p = alloc(None, (4, 8), np.float16)
    assert p == 0x4000 and events == [("ndarray", (4, 8))]
    current["device"] = 0
    events.clear()
    alloc(None, (4, 8), np.float16)
    assert events == [("enter", 1), ("ndarray", (4, 8)), ("exit", 1)]
    assert cur(None) == 0x77
    assert dev == 1 and not here()
    current["device"] = 1
    assert here()
    assert repeat.framework_ops(repeat.CUPY, 1)[0] is alloc  # looked up once per device

    class Tensor:
        def new_empty(self, shape, dtype):
            return types.SimpleNamespace(data_ptr=lambda: 0x5000, shape=shape, dtype=dtype)

    monkeypatch.setitem(repeat._mods, "torch", types.SimpleNamespace(
        _C=types.SimpleNamespace(_cuda_getDevice=lambda: 3)))
    monkeypatch.setitem(repeat._mods, "torch_raw_stream", lambda d: 0x100 + d)
    with mock.patch.object(repeat, "torch_dtype_of", lambda d: "bf16"):
        t_alloc, t_cur, t_here, t_dev = repeat.framework_ops(repeat.TORCH, 3)
        t, p = t_alloc(Tensor(), (2, 2), np.float16)
    assert p == 0x5000 and t.dtype == "bf16" and t_cur(Tensor()) == 0x103
    assert t_dev == 3 and t_here()
    monkeypatch.setattr(repeat, "_OPS", {})  # a torch without the private query: the driver's
    monkeypatch.setitem(repeat._mods, "torch", types.SimpleNamespace(_C=types.SimpleNamespace()))
    monkeypatch.setattr(arrays, "_driver", lambda: types.SimpleNamespace(
        cuCtxGetDevice=lambda: (0, 2)))
    assert not repeat.framework_ops(repeat.TORCH, 3)[2]()
    with pytest.raises(ValueError, match="CUPY or TORCH"):
        repeat.framework_ops(repeat.OTHER, 0)


#: two different 256-byte pairs of "tensor maps" for the sm90a launchers' fakes
MAPS = (ctypes.c_ubyte * 256)(*range(256))
OTHER = (ctypes.c_ubyte * 256)(*[(7 * i + 3) % 256 for i in range(256)])


def _gemm_step(tag, launched, n_scalars=13, ctype=launch.F64):
    from nbkernels.matmul import fast

    n = 60
    values, ctys = [0] * n, [ctype] * n  # any field takes any value (F64)
    if tag.startswith("wgmma"):  # the tensor maps travel by value (wgmma_kernel.BY_VALUE)
        values[4], ctys[4] = bytes(256), ctypes.c_ubyte * 256
    packed = launch.PackedArgs(values, ctys)

    def fake_bind(fn, grid, block, smem, p):
        return lambda stream: launched.append((fn[1], stream, [
            bytes(s) if isinstance(s, ctypes.Array) else s.value for s in p.slots]))

    with mock.patch.object(launch, "bind", fake_bind):
        return fast._Step((None, tag), (4, 4, 1), (128, 1, 1), 512, packed,
                          fast._fields(tag, n_scalars))


@pytest.mark.parametrize("has_c", [False, True])
def test_gemm_launcher_writes_pointers_scalars_and_fresh_output(has_c):
    """A recorded split-K GEMM (partial products, then the reduction) replayed on new arrays:
    a, b, the fresh output, the fresh workspace, alpha and beta land in their fields of both
    argument blocks; without c the output stands in for it and beta is 0."""
    from nbkernels.matmul import fast

    launched = []
    made = {(64, 64): (FakeCupy((64, 64), np.float16, ptr=0x7000), 0x7000),
            (2, 64, 64): (FakeCupy((2, 64, 64), ptr=0x9000), 0x9000)}
    ops = fops(lambda like, shape, dtype: made[tuple(shape)], lambda like: 55)
    lz = fast.Launcher([_gemm_step("mma-partial", launched), _gemm_step("reduce", launched)],
                       cast=float, out_shape=(64, 64), out_dtype=np.dtype(np.float16),
                       has_c=has_c, ops=ops, workspace=((2, 64, 64), np.dtype(np.float32)))
    a = FakeCupy((64, 32), np.float16, ptr=0x1000)
    got = lz((0x1000, 0x2000, 0x3000 if has_c else 0, 0), a, object() if has_c else None,
             None, 1.5, 0.5, None)
    assert got is made[(64, 64)][0]
    (t1, s1, partial), (t2, s2, reduce) = launched
    assert (t1, t2, s1, s2) == ("mma-partial", "reduce", 55, 55)
    assert [partial[i] for i in fast._PTR] == [0x1000, 0x2000, 0x9000, 0x9000]
    assert partial[28 + 13] == 1.5
    assert [reduce[i] for i in fast._PTR[:3]] == [0x9000, 0x3000 if has_c else 0x7000, 0x7000]
    assert reduce[30] == (0.5 if has_c else 0.0)


def test_gemm_takes_a_recorded_launcher_first_and_hands_it_the_stream(monkeypatch):
    """``nbkernels.gemm`` on arrays whose key has a launcher replays it, with no plan and no
    stream context of its own: the launcher is handed ``stream=`` as given and orders its
    allocations on it (test below), as the row replays do; as a decorator it still returns a
    fused GEMM."""
    import nbkernels
    from nbkernels.matmul import FusedGemm, fast

    a, b = FakeCupy((64, 32), np.float16, ptr=0x1000), FakeCupy((32, 16), np.float16, ptr=0x2000)
    fired, events = [], []

    class Lz:
        def fire(self, ptrs, like, c, out, alpha, beta, stream):
            fired.append((ptrs, like, stream))
            return "result"

    key, ptrs = fast.key_of(a, b, None, None, 1, 0, None, None, None)
    monkeypatch.setitem(fast._FAST, key, Lz())
    monkeypatch.setattr(repeat, "on_stream", recording_context(events))
    monkeypatch.setattr("nbkernels.matmul.plan", lambda *a, **k: pytest.fail("planned"))
    assert nbkernels.gemm(a, b) == "result" and fired == [(ptrs, a, None)]
    assert nbkernels.gemm(a, b, stream=42) == "result"
    assert fired[-1] == (ptrs, a, 42) and not events

    def epilogue(acc, i, j):
        return acc

    assert isinstance(nbkernels.gemm(epilogue), FusedGemm)


@pytest.mark.parametrize("split", [False, True])
def test_gemm_launcher_allocates_from_a_given_streams_pool(monkeypatch, split):
    """A GEMM replay allocates its output (and a split tail's workspace and flags) inside the
    given stream's context and launches after it, on that stream; without ``stream=`` it
    allocates outside any context and launches on the current stream (the rule of the row
    replays, repeat.alloc_source)."""
    from nbkernels.matmul import fast

    class Maps:
        def host_ptr(self, pa, pb):
            events.append(("maps",))
            return ctypes.addressof(MAPS)

    events, launched = [], []
    ptrs = iter(range(0x10000, 0x20000, 0x100))

    def alloc(like, shape, dtype):
        events.append(("alloc", tuple(shape)))
        p = next(ptrs)
        return FakeCupy(shape, dtype, ptr=p), p

    monkeypatch.setattr(repeat, "on_stream", recording_context(events))
    tag = "wgmma-sk" if split else "wgmma"
    sk = (((3 * 64 * 64,), np.dtype(np.float32)), ((12,), np.dtype(np.int64))) if split else None
    lz = fast.Launcher([_gemm_step(tag, launched, 13, launch.I64)], cast=int, out_shape=(64, 64),
                       out_dtype=np.dtype(np.float16), has_c=False,
                       ops=fops(alloc, lambda like: 55), maps=Maps(), streamk=sk)
    a = FakeCupy((64, 32), np.float16, ptr=0x1000)
    allocs = [("alloc", (64, 64))] + ([("alloc", (3 * 64 * 64,)), ("alloc", (12,))] if split
                                      else [])
    lz((0x1000, 0x2000, 0, 0), a, None, None, 1, 0, None)
    assert events == allocs + [("maps",)] and launched[-1][1] == 55
    assert launched[-1][2][4] == bytes(MAPS)  # the maps' bytes copied into the block
    events.clear()
    lz((0x1000, 0x2000, 0, 0), a, None, None, 1, 0, 9)
    assert events == [("enter", a, 9)] + allocs + [("exit", a, 9), ("maps",)]
    assert launched[-1][1] == 9


def test_gemm_launcher_threads_never_launch_each_others_pointers():
    """Two threads repeating one recorded call: each launch carries the pointers of the thread
    that made it (the argument blocks are shared; the launcher's lock keeps write + launch
    together). Thread switches are forced every microsecond to give interleaving a chance."""
    import sys

    from nbkernels.matmul import fast

    launched = []
    mine = threading.local()  # each thread's current stream names the thread
    ops = fops(None, lambda like: mine.stream)  # (nothing allocated: out given)
    lz = fast.Launcher([_gemm_step("mma", launched)], cast=float, out_shape=None,
                       out_dtype=np.dtype(np.float16), has_c=False, ops=ops)
    a = FakeCupy((64, 32), np.float16)
    errors = []

    def worker(base):
        mine.stream = base
        for i in range(3000):
            ptrs = (base + i * 64, base + 0x100000 + i * 64, 0, base + 0x200000 + i * 64)
            lz(ptrs, a, None, object(), 1.0, 0.0, None)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        ts = [threading.Thread(target=worker, args=(base,)) for base in (1 << 32, 1 << 40)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    for _, stream, slots in launched:
        if not all(stream <= slots[i] < stream + 0x300000 for i in (fast._PTR[0], fast._PTR[1],
                                                                   fast._PTR[3])):
            errors.append((stream, [slots[i] for i in fast._PTR]))
    assert len(launched) == 6000 and not errors, errors[:3]


@pytest.mark.parametrize("cluster", [None, (2, 1, 1)])
def test_a_bound_launch_keeps_its_argument_block_alive(cluster):
    """launch.bind keeps the block's address, and a replay may hold only the bound launch and
    the slots: the void*[] the address points at must live as long as the launch (it did not,
    and the H200 answered CUDA_ERROR_INVALID_VALUE: session 11, run 4)."""
    import gc
    import weakref

    packed = launch.PackedArgs([1, 2], [launch.VOIDP, launch.I64])
    alive = weakref.ref(packed)
    go = launch.bind((None, "f", cluster), (2, 1, 1), (32, 1, 1), 0, packed)
    del packed
    gc.collect()
    assert alive() is not None and callable(go)


def test_a_bound_launch_goes_through_cupys_wrapper_when_cupy_is_loaded(monkeypatch):
    """With CuPy imported, the bound launch calls CuPy's Cython cuLaunchKernel wrapper with the
    raw function handle and the block's address (~0.5 us less than cuda-bindings, session 12
    run 5); a driver error from it surfaces as an NbkernelsError naming the launch."""
    import sys
    import types

    calls = []

    def launch_kernel(*args):
        calls.append(args)
        if args[8] == 13:  # the stream of the failing launch below
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: invalid argument")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        driver=types.SimpleNamespace(launchKernel=launch_kernel)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    packed = launch.PackedArgs([1, 2], [launch.VOIDP, launch.I64])
    go = launch.bind((None, 0xABC), (2, 3, 1), (64, 1, 1), 1024, packed)
    go(7)
    assert calls == [(0xABC, 2, 3, 1, 64, 1, 1, 1024, 7, packed.address, 0)]
    with pytest.raises(NbkernelsError, match="cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
        go(13)


def test_gemm_launcher_declines_an_out_that_shares_memory_with_an_input():
    """A recorded call (out separate) is not replayed when a later call with the same key has
    out overlapping a or b, or c other than element for element: the replay returns DECLINED
    (the full path copies) and launches nothing."""
    from nbkernels.matmul import fast

    launched = []

    def launcher(has_c, c_like_out):
        return fast.Launcher([_gemm_step("mma", launched)], cast=float, out_shape=None,
                             out_dtype=np.dtype(np.float32), has_c=has_c,
                             ops=fops(None, lambda like: 0), c_like_out=c_like_out,
                             spans=((0, 4096), (0, 4096), (0, 4096), (0, 4096)))  # 32 x 32 f32

    def declines(lz, ptrs):
        before = len(launched)
        res = lz(ptrs, None, object(), "out", 1.0, 0.0, None)
        assert (res is repeat.DECLINED) == (len(launched) == before)
        return res is repeat.DECLINED

    lz = launcher(True, True)
    A, B, C, D = 0x10000, 0x20000, 0x30000, 0x40000
    assert not declines(lz, (A, B, C, D))
    assert declines(lz, (A, B, C, A))  # out=a
    assert declines(lz, (A, B, C, B + 4092))  # out's first element is b's last
    assert not declines(lz, (A, B, C, B + 4096))  # right after b
    assert declines(lz, (A, B, C, B - 4092))  # out's last element is b's first
    assert not declines(lz, (A, B, D, D))  # c is out itself: element for element
    assert declines(lz, (A, B, D + 128, D))  # c shifted into out
    lz = launcher(True, False)  # c of another layout (a broadcast row) may not meet out at all
    assert declines(lz, (A, B, D, D))
    lz = launcher(False, False)  # no c: its pointer slot holds nothing that counts
    assert not declines(lz, (A, B, D, D + 8192))
    assert not declines(lz, (A, B, D, D))


def _rows(ptr, rows, n, stride, itemsize=4):
    v = repeat_view(ptr, rows, n, stride, itemsize)
    return host.Rows(v, rows, n, stride, None)


def repeat_view(ptr, rows, n, stride, itemsize):
    from nbkernels import arrays

    dt = {2: np.float16, 4: np.float32}[itemsize]
    return arrays.ArrayView(ptr, (rows, n), (stride, 1), np.dtype(dt), "cupy", 0, None)


@pytest.mark.parametrize("a, b, meet", [
    ((0x1000, 8, 64, 64), (0x1000, 8, 64, 64), True),  # the same rows
    ((0x1000, 8, 64, 64), (0x1000 + 256, 8, 64, 64), True),  # x[1:] for x[:-1]
    ((0x1000, 8, 64, 64), (0x1000 + 2048, 8, 64, 64), False),  # right after
    ((0x1000, 8, 64, 64), (0x1000 + 2044, 8, 64, 64), True),  # one element into the last row
    ((0x1000, 8, 32, 64), (0x1000 + 128, 8, 32, 64), False),  # gate / up halves interleaved
    ((0x1000, 8, 32, 64), (0x1000 + 124, 8, 32, 64), True),  # ... shifted by one element
    ((0x1000, 8, 32, 64), (0x1000 + 128 - 256, 8, 32, 64), False),  # the half before
    ((0x1000, 8, 64, 64), (0x1000 + 16 * 256, 1, 64, 64), False),  # a vector past the rows
    ((0x1000, 8, 64, 64), (0x1000 + 7 * 256, 1, 64, 64), True),  # ... on the last row
    ((0x1000, 1, 64, 64), (0x1000 - 256, 4, 64, 64), True),  # one row inside another array
    ((0x1000, 4, 16, 64), (0x1000 + 64, 4, 16, 32), True),  # other strides: address ranges
    ((0x1000, 0, 64, 64), (0x1000, 8, 64, 64), False),  # no rows
])
def test_rows_meet_is_exact_for_views_of_one_array(a, b, meet):
    ra, rb = _rows(*a), _rows(*b)
    assert host.rows_meet(ra, rb) is meet and host.rows_meet(rb, ra) is meet
    assert host.same_rows(ra, rb) is (a == b and a[1] > 0)


def test_rows_meet_agrees_with_numpy_on_many_views():
    """Every pair of row views of one buffer: exact overlap is NumPy's ``shares_memory``."""
    rng = np.random.default_rng()
    buf = np.zeros(4096, np.float32)
    base = buf.__array_interface__["data"][0]
    for _ in range(400):
        s = int(rng.integers(1, 40))
        views = []
        for _ in range(2):
            n = int(rng.integers(1, s + 1))
            rows = int(rng.integers(1, 8))
            off = int(rng.integers(0, 4096 - (rows - 1) * s - n + 1))
            a = np.lib.stride_tricks.as_strided(buf[off:], (rows, n), (s * 4, 4))
            views.append((a, _rows(base + off * 4, rows, n, s)))
        (a, ra), (b, rb) = views
        assert host.rows_meet(ra, rb) == np.shares_memory(a, b), (ra, rb)


def test_row_replay_declines_an_out_meeting_an_input_unlike_the_recorded_call():
    """Recorded with a separate out, a repeat call whose out is x shifted by a row (same key:
    same shapes and strides) goes to the full path; at the recorded layout it replays."""
    packed = launch.PackedArgs([0, 0, 0], [launch.VOIDP] * 3)

    class Call:
        launches = [(("f", "fn"), (2, 1, 1), (64, 1, 1), 0, packed,
                     [(0, "x"), (1, "weight"), (2, "out")])]
        allocs = []

    launched = []
    x, w = FakeCupy((8, 64), ptr=0x10000), FakeCupy((64,), ptr=0x20000)
    out = FakeCupy((8, 64), ptr=0x30000)
    ops = fops(None, lambda like: 0)  # nothing allocated
    with mock.patch.object(launch, "bind", lambda *a: lambda s: launched.append(s)):
        named = {"x": x, "weight": w, "out": out}
        rep = host.Replay(Call(), ("out",), None, named, _by_name(named), ops)
        args = (x, w, out)
        assert rep(args, (0x10000, 0x20000, 0x30000), (), None) is out
        for o in (0x10000 + 256, 0x10000 - 256, 0x20000 - 1024, 0x20000 - 2044):
            assert rep(args, (0x10000, 0x20000, o), (), None) is repeat.DECLINED, hex(o)
        assert rep(args, (0x10000, 0x20000, 0x20000 + 256), (), None) is out  # after the weight
        assert len(launched) == 2
        # recorded in place (out is x): replays in place, declines a shifted out
        named = {"x": x, "weight": w, "out": x}
        rep = host.Replay(Call(), ("out",), None, named, _by_name(named), ops)
        args = (x, w, x)
        assert rep(args, (0x50000, 0x20000, 0x50000), (), None) is x
        assert rep(args, (0x50000, 0x20000, 0x50100), (), None) is repeat.DECLINED


def _by_name(named):
    """The full path's pointers by name of a call on ``named`` (host.by_name after a key)."""
    key_fn = host.key_function("t", tuple(named))
    return host.by_name(key_fn, tuple(named.values()), key_fn(tuple(named.values()), ())[1])[1]


def test_split_tail_replay_fields_are_the_kernels_workspace_flags_and_nonce():
    """The fields fast._fields names for a split-tail launch, counted from the kernel's own
    signature (an array argument packs 5 + 2 * ndim fields, its data pointer 5th)."""
    from numba import types

    from nbkernels.matmul import fast, run

    sig = run._wgmma_sig(types.Tuple(()), True)
    starts, at = [], 0
    for t in sig:
        starts.append(at)
        at += 5 + 2 * t.ndim if isinstance(t, types.Array) else 1
    ws, flags, nonce = 19, 20, 21  # TM, C, D, 9 int64, 2 float32, 5 int32, then these
    assert (sig[ws].dtype, sig[flags].dtype, sig[nonce]) == (types.float32, types.int64,
                                                             types.int64)
    fields = dict((name, i) for i, name in fast._fields("wgmma-sk", 13))
    assert fields["w"] == starts[ws] + 4 and fields["flags"] == starts[flags] + 4
    assert fields["nonce"] == starts[nonce]
    assert fields["tm"] == starts[0] + 4 and fields["beta"] == starts[13]
    assert fields["c"] == starts[1] + 4 and fields["d"] == starts[2] + 4
    assert fields["alpha"] == starts[12] and (sig[12], sig[13]) == (types.float32,) * 2


def test_split_tail_replays_get_their_own_workspace_flags_and_nonce():
    """Each replay of a split-tail launch allocates a workspace and flags (calls on other
    streams or threads must not share them) and passes a nonce no earlier call had."""
    from nbkernels.matmul import fast

    class Maps:
        def host_ptr(self, pa, pb):  # other maps for other a (the first field, pa)
            return ctypes.addressof(MAPS if pa == 0x1000 else OTHER)

    launched = []
    ptrs = iter(range(0x10000, 0x20000, 0x100))
    allocated = []

    def alloc(like, shape, dtype):
        allocated.append((tuple(shape), np.dtype(dtype)))
        p = next(ptrs)
        return FakeCupy(shape, dtype, ptr=p), p

    # (every field is an int64 here, the nonce's 63 bits included: alpha and beta cast to int)
    lz = fast.Launcher([_gemm_step("wgmma-sk", launched, 13, launch.I64)], cast=int,
                       out_shape=(64, 64), out_dtype=np.dtype(np.float16), has_c=False,
                       ops=fops(alloc, lambda like: 55), maps=Maps(),
                       streamk=(((3 * 64 * 64,), np.dtype(np.float32)),
                                ((12,), np.dtype(np.int64))))
    a = FakeCupy((64, 32), np.float16, ptr=0x1000)
    for pa in (0x1000, 0x3000):
        lz((pa, 0x2000, 0, 0), a, None, None, 1.0, 0.0, None)
    assert allocated == [((64, 64), np.dtype(np.float16)), ((3 * 64 * 64,), np.dtype(np.float32)),
                         ((12,), np.dtype(np.int64))] * 2
    fields = dict((name, i) for i, name in fast._fields("wgmma-sk", 13))
    (_, _, first), (_, _, second) = launched
    assert (first[fields["w"]], first[fields["flags"]]) == (0x10100, 0x10200)
    assert (second[fields["w"]], second[fields["flags"]]) == (0x10400, 0x10500)
    assert first[fields["tm"]] == bytes(MAPS) and first[fields["d"]] == 0x10000
    assert second[fields["tm"]] == bytes(OTHER)
    assert first[fields["nonce"]] != second[fields["nonce"]]
    assert 0 not in (first[fields["nonce"]], second[fields["nonce"]])


def test_stream_ordered_makes_a_given_stream_current_for_the_call(monkeypatch):
    """With ``stream=``, the call runs inside the framework context of its array argument (found
    by position or keyword) and still gets the stream; without, no context and no stream
    keyword added."""
    import inspect

    events = []
    Ctx = recording_context(events)

    monkeypatch.setattr(repeat, "on_stream", Ctx)

    @repeat.stream_ordered(1, "x")
    def op(self, x, y=0, *, stream=None):
        events.append(("call", x, stream))
        return x + y

    assert op(None, 1, 2) == 3 and events == [("call", 1, None)]
    events.clear()
    assert op(None, 5, stream="s") == 5
    assert events == [("enter", 5, "s"), ("call", 5, "s"), ("exit", 5, "s")]
    events.clear()
    assert op(None, x=7, stream="t") == 7
    assert events == [("enter", 7, "t"), ("call", 7, "t"), ("exit", 7, "t")]
    assert list(inspect.signature(op).parameters) == ["self", "x", "y", "stream"]


def test_row_replay_allocates_from_a_given_streams_pool_and_the_current_one_otherwise(
        monkeypatch):
    """A replay that allocates its output does so inside the given stream's context (the
    output then comes from that stream's pool, as on the full path), and outside any context
    without ``stream=``; the launch follows the allocation."""
    events = []
    Ctx = recording_context(events)

    packed = launch.PackedArgs([0, 0], [launch.VOIDP] * 2)

    class Call:
        launches = [(("f", "fn"), (1, 1, 1), (32, 1, 1), 0, packed, [(0, "x"), (1, "out")])]
        allocs = [("out", (2, 64), np.dtype(np.float32))]

    x, made = FakeCupy((2, 64), ptr=0x1000), FakeCupy((2, 64), ptr=0x7000)
    named = {"x": x, "out": None}

    def alloc(like, shape, dtype):
        events.append(("alloc", like))
        return made, 0x7000

    monkeypatch.setattr(repeat, "on_stream", Ctx)
    with mock.patch.object(launch, "bind", lambda *a: lambda s: events.append(("launch", s))):
        rep = host.Replay(Call(), ("out",), None, named, {"x": 0x1000}, fops(alloc, lambda l: 5))
    assert rep.fire((x, None), (0x1000, None), (), None) is made
    assert events == [("alloc", x), ("launch", 5)]
    events.clear()
    assert rep.fire((x, None), (0x1000, None), (), 9) is made
    assert events == [("enter", x, 9), ("alloc", x), ("exit", x, 9), ("launch", 9)]


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "softmax", "swiglu"])
def test_row_ops_take_a_recorded_replay_first_and_hand_it_the_stream(monkeypatch, op):
    """A row op on arrays whose key has a replay fires it before anything else (no wrapper
    frame, no checks, no plan), handing it ``stream=`` as given; the replay itself orders its
    allocation on that stream (test above)."""
    import nbkernels

    x, w = FakeCupy((4, 64), ptr=0x1000), FakeCupy((64,), ptr=0x2000)
    named, extra = {
        "rms_norm": ({"x": x, "weight": w, "residual": None, "out": None, "residual_out": None},
                     (float, None)),
        "layer_norm": ({"x": x, "weight": w, "bias": w, "out": None}, (float, None)),
        "softmax": ({"x": x, "out": None}, (None,)),
        "swiglu": ({"gate": x, "up": x, "out": None}, (None,)),
    }[op]
    import importlib

    key_fn = importlib.import_module(f"nbkernels.rows.{op}_kernel")._KEY
    assert key_fn.names == tuple(named)
    key, ptrs = key_fn(tuple(named.values()), extra)
    assert key[0] == op and key[1] == repeat.desc(x)[0]  # FakeCupy is read as CuPy here
    fired = []

    class Rep:
        def fire(self, args, ptrs, scalars, stream):
            fired.append((args, ptrs, scalars, stream))
            return "result"

    monkeypatch.setitem(host._FAST, key, Rep())
    monkeypatch.setattr(host, "Call", lambda *a, **k: pytest.fail("took the full path"))
    monkeypatch.setattr(repeat, "on_stream", lambda *a: pytest.fail("entered a stream"))
    args = {"rms_norm": (x, w), "layer_norm": (x, w, w), "softmax": (x,), "swiglu": (x, x)}[op]
    fn = getattr(nbkernels, op)
    assert fn(*args) == "result" and fn(*args, stream=7) == "result"
    scalars = (1e-6,) if op == "rms_norm" else (1e-5,) if op == "layer_norm" else ()
    arrays_ = tuple(named.values())
    assert fired == [(arrays_, ptrs, scalars, None), (arrays_, ptrs, scalars, 7)]


# --- arguments passed by value (launch.by_value_ptx, the sm90a kernel's tensor maps) ----------
_PTX = """
.visible .entry K(
	.param .u64 K_param_0,
	.param .u64 K_param_1,
	.param .u64 K_param_2,
	.param .u64 K_param_3,
	.param .u64 K_param_4,
	.param .u64 K_param_5,
	.param .u64 K_param_6,
	.param .u64 K_param_7,
	.param .u64 K_param_8,
	.param .u64 K_param_9,
	.param .u64 K_param_10
)
{
	ld.param.u64 	%rd1, [K_param_10];
	ld.param.u64 	%rd12, [K_param_4];
	ld.param.u64 	%rd2, [K_param_6];
	prefetch.tensormap [%rd12];
	add.s64 	%rd120, %rd12, %rd2;
$L__BB0_1:
	@%p1 cp.async.bulk.tensor.3d [%r1], [%rd12, {%r2, %r3, %r4}], [%r5];
	ret;
}
"""


def test_by_value_ptx_declares_the_bytes_and_takes_their_address_at_each_use():
    """The data parameter of argument 0 (a uint8[2, 128] array: its 5th field) becomes a
    256-byte parameter aligned for tensor maps; its load is gone, and each instruction that
    read the pointer reads the parameter's generic address, taken right before it."""
    from numba import types

    sig = (types.Array(types.uint8, 2, "C"), types.int64, types.int64)
    out = launch.by_value_ptx(_PTX, sig, {0: 256})
    assert ".param .align 64 .b8 K_param_4[256]" in out and ".param .u64 K_param_4" not in out
    assert "ld.param.u64 \t%rd12" not in out and "[K_param_4]" not in out
    lines = [ln.strip() for ln in out.splitlines()]
    for use in ("prefetch.tensormap [%rd12];", "add.s64 \t%rd120, %rd12, %rd2;",
                "@%p1 cp.async.bulk.tensor.3d [%r1], [%rd12, {%r2, %r3, %r4}], [%r5];"):
        i = lines.index(use)
        assert lines[i - 1] == "cvta.param.u64 %rd12, K_param_4;", (use, lines[i - 1])
    assert sum("cvta.param" in ln for ln in lines) == 3  # not before %rd120's or %rd1's uses
    assert "ld.param.u64 \t%rd1, [K_param_10];" in out  # other parameters untouched
    # the data field of a later argument: after 9 fields of argument 0 and one int64
    later = (types.int64, types.Array(types.uint8, 1, "C"))
    assert ".b8 K_param_5[128]" in launch.by_value_ptx(
        _PTX.replace("[K_param_4]", "[K_param_5]"), later, {1: 128})


@pytest.mark.parametrize("ptx,sig,by_value,msg", [
    (_PTX, "int64", {0: 256}, "expected an array type"),
    (_PTX, "none", {0: 256}, "expected a position below 0"),
    (_PTX.replace("ld.param.u64 \t%rd12, [K_param_4];", ""), "array", {0: 256},
     "found 0 such loads"),
    (_PTX.replace("add.s64 \t%rd120, %rd12", "add.s64 \t%rd12, %rd12"), "array", {0: 256},
     "to be written once"),
    (_PTX.replace(".param .u64 K_param_4,", ".param .u32 K_param_4,"), "array", {0: 256},
     "declared as .u64"),
])
def test_by_value_ptx_refuses_what_it_cannot_rewrite(ptx, sig, by_value, msg):
    from numba import types

    sig = {"array": (types.Array(types.uint8, 2, "C"),), "int64": (types.int64,),
           "none": ()}[sig]
    with pytest.raises(NbkernelsError, match=msg):
        launch.by_value_ptx(ptx, sig, by_value)


def test_by_value_params_pack_the_bytes_in_place_of_the_pointer():
    maps = np.arange(256, dtype=np.uint8).reshape(2, 128)
    vals, typs = launch.by_value_params(maps, 256)
    packed = launch.PackedArgs(vals, typs)
    assert bytes(packed.slots[4]) == maps.tobytes() and ctypes.sizeof(packed.slots[4]) == 256
    assert [s.value for s in packed.slots[5:]] == [2, 128, 128, 1]  # shape, byte strides
    maps[:] = 0  # the block holds a copy
    assert bytes(packed.slots[4]) == bytes(range(256))
    for bad in (maps[:, :64], np.zeros(256, np.uint8)[::2], maps.tolist()):
        with pytest.raises(NbkernelsError, match="expected a C-contiguous NumPy array of 256"):
            launch.by_value_params(bad, 256)


def test_map_cache_gives_each_pair_its_own_bytes_and_encodes_only_what_moved(monkeypatch):
    """The sm90a launcher's maps (wgmma_kernel.MapCache), on fake encoders: the 256 bytes at
    the address it gives are a's map then b's; a new a with the same b encodes a's map only;
    past its bound the cache starts over and still gives the right bytes."""
    from nbkernels.matmul import wgmma_kernel as wk

    encoded = []

    def fake_encoder(geometry):
        def encode(ptr):
            encoded.append((geometry, ptr))
            return np.frombuffer((f"{geometry}:{ptr}:".encode() * 40)[:128], np.uint8)
        return encode

    monkeypatch.setattr(wk, "_encoder", fake_encoder)
    cache = wk.MapCache(("A", "B"))

    def want(pa, pb):
        return (f"A:{pa}:".encode() * 40)[:128] + (f"B:{pb}:".encode() * 40)[:128]

    assert ctypes.string_at(cache.host_ptr(16, 32), 256) == want(16, 32)
    assert cache.host_ptr(16, 32) == cache.host_ptr(16, 32) and len(encoded) == 2
    assert ctypes.string_at(cache.host_ptr(48, 32), 256) == want(48, 32)
    assert encoded[2:] == [("A", 48)]  # b's map reused
    for pa in range(64, 64 + 16 * (wk.MapCache.REMEMBERED + 10), 16):
        assert ctypes.string_at(cache.host_ptr(pa, 32), 256) == want(pa, 32)
    assert ctypes.string_at(cache.host_ptr(16, 32), 256) == want(16, 32)


def test_cupy_replay_writes_its_framework_calls_and_launch_inline(monkeypatch):
    """On CuPy the generated replay calls CuPy's device query, allocator, stream query and
    launch wrapper itself (perf-notes h9: one Python frame less each), with what the
    functions it replaces would have passed: the device check picks the branch, the output
    comes from ``ndarray`` (inside the recorded device's scope where another is current),
    the launch gets the bound grid, block, shared memory, argument block and the current
    stream, and a failed launch is the bound launch's typed error."""
    import types

    current = {"device": 1}
    launched, events = [], []

    def ndarray(shape, dtype):
        events.append(("ndarray", tuple(shape)))
        return FakeCupy(shape, dtype, ptr=0x9000)

    def launch_kernel(*a):
        if a[0] == 0xBAD:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE")
        launched.append(a[:9] + ([s.value for s in packed.slots],) + a[10:])

    fake = types.SimpleNamespace(ndarray=ndarray, cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: current["device"]),
        Device=recording_device(events), get_current_stream=lambda: types.SimpleNamespace(
            ptr=0x77), driver=types.SimpleNamespace(launchKernel=launch_kernel)))
    monkeypatch.setitem(repeat._mods, "cupy", fake)
    monkeypatch.setitem(__import__("sys").modules, "cupy", fake)
    monkeypatch.setattr(repeat, "_OPS", {})
    monkeypatch.setattr(arrays, "DeviceScope", recording_device(events))
    monkeypatch.setattr(repeat, "on_stream", recording_context([]))  # (CuPy's stream pools)
    monkeypatch.setattr(arrays, "stream_device", lambda h: 1)
    ops = repeat.framework_ops(repeat.CUPY, 1)
    packed = launch.PackedArgs([0, 0, 0.0], [launch.VOIDP, launch.VOIDP, launch.F32])

    def recorded(handle):
        class Call:
            launches = [((None, handle), (3, 1, 1), (128, 1, 1), 4096, packed,
                         [(0, "x"), (1, "out"), (2, "eps")])]
            allocs = [("out", (2, 64), np.dtype(np.float32))]
        x = FakeCupy((2, 64), ptr=0x1000, device=1)
        return host.Replay(Call(), ("out",), None, {"x": x, "out": None}, {"x": 0x1000}, ops,
                           ("eps",)), x

    rep, x = recorded(0x1234)
    for call in ("here(", "alloc(", "current(", "go0("):
        assert call not in rep.source, call
    got = rep.fire((x, None), (0x1000, None), (0.5,), None)
    assert got.data.ptr == 0x9000 and events == [("ndarray", (2, 64))]
    addr = packed.address
    assert launched == [(0x1234, 3, 1, 1, 128, 1, 1, 4096, 0x77, [0x1000, 0x9000, 0.5], 0)]
    assert rep.fire((x, None), (0x1000, None), (0.5,), 0x40) is not None
    assert launched[-1][8] == 0x40  # a given stream
    events.clear()
    current["device"] = 0  # another GPU is current: the recorded device's scope around it all
    rep.fire((x, None), (0x1000, None), (0.5,), None)
    assert events == [("enter", 1), ("ndarray", (2, 64)), ("exit", 1)]
    assert addr == packed.address
    bad, _ = recorded(0xBAD)
    with pytest.raises(NbkernelsError, match="cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
        bad.fire((x, None), (0x1000, None), (0.5,), None)
