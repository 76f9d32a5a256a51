"""The repeat-call pieces (nbkernels.repeat) and the row replay on CPU: keys change with
everything a launch depends on, environment switches set between calls are seen, and a replay
writes each call's own pointers, scalars and fresh outputs into the recorded argument block.
CuPy-like stand-ins are registered as CuPy arrays (no GPU or CuPy needed)."""
import os
from unittest import mock

import numpy as np
import pytest

from nbkernels import launch, repeat
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


@pytest.fixture(autouse=True)
def fake_kind():
    with mock.patch.dict(repeat._KINDS, {FakeCupy: repeat.CUPY}):
        yield


def test_desc_keys_what_a_launch_depends_on():
    base = repeat.desc(FakeCupy((4, 64)))
    assert base[1] == 1 << 20
    assert repeat.desc(FakeCupy((4, 64), ptr=(1 << 20) + 4096))[0] == base[0]  # pointer only
    for other in (FakeCupy((4, 32)), FakeCupy((4, 64), np.float16),
                  FakeCupy((4, 64), strides=(512, 4)), FakeCupy((4, 64), ptr=(1 << 20) + 8),
                  FakeCupy((4, 64), device=1)):
        assert repeat.desc(other)[0] != base[0]


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


def test_env_switches_follow_a_replaced_environ(monkeypatch):
    sw = repeat.EnvSwitches("NBK_TEST_SWITCH_A")
    monkeypatch.setattr(os, "environ", {"NBK_TEST_SWITCH_A": "x"})
    assert sw.values() == ("x",)


def test_row_key_changes_with_switches_aliasing_and_target(monkeypatch):
    monkeypatch.delenv("NBKERNELS_ROWS_LOOP", raising=False)
    x, w, out = FakeCupy((8, 64)), FakeCupy((64,), ptr=1 << 24), FakeCupy((8, 64), ptr=1 << 28)
    named = {"x": x, "weight": w, "out": out}
    key, ptrs = host.fast_key("rms_norm", named, (float, None))
    assert ptrs == {"x": 1 << 20, "weight": 1 << 24, "out": 1 << 28}
    monkeypatch.setenv("NBKERNELS_ROWS_LOOP", "2")
    assert host.fast_key("rms_norm", named, (float, None))[0] != key
    monkeypatch.delenv("NBKERNELS_ROWS_LOOP")
    assert host.fast_key("rms_norm", named, (float, None))[0] == key
    in_place, _ = host.fast_key("rms_norm", {"x": x, "weight": w, "out": x}, (float, None))
    assert in_place != key
    with host.target_arch("sm_75"):
        assert host.fast_key("rms_norm", named, (float, None))[0] != key
    assert host.fast_key("rms_norm", {"x": x, "weight": np.zeros(64)}, (float, None)) == \
        (None, None)


def test_replay_writes_each_calls_pointers_scalars_and_outputs():
    """A recorded launch of (x, weight, out, eps) replayed on new arrays: every tagged slot
    of the packed block holds the new call's value when the launch is made."""
    packed = launch.PackedArgs([0, 0, 0, 0.0, 0], [launch.VOIDP] * 3 + [launch.F32, launch.I64])

    class Call:
        launches = [(("f", "fn"), (2, 1, 1), (256, 1, 1), 1024, packed,
                     [(0, "x"), (1, ("weight", 64)), (2, "out"), (3, "eps")])]
        allocs = [("out", (8, 64), np.dtype(np.float32))]

    rep = host.Replay(Call(), ("out",), None)
    made = FakeCupy((8, 64), ptr=0x7000)
    launched = []

    def fake_launch(fn, grid, block, smem, stream, p):
        launched.append((fn, grid, block, smem, stream, [s.value for s in p.slots]))

    x, w = FakeCupy((8, 64), ptr=0x1000), FakeCupy((64,), ptr=0x2000)
    named = {"x": x, "weight": w, "out": None}
    with mock.patch.object(repeat, "alloc", lambda like, shape, dtype: made), \
            mock.patch.object(repeat, "stream_handle", lambda like, stream: 77), \
            mock.patch.object(launch, "launch_packed", fake_launch):
        got = rep(named, {"x": 0x1000, "weight": 0x2000}, {"eps": 0.25}, None)
    assert got is made
    (fn, grid, block, smem, stream, slots), = launched
    assert (fn, grid, block, smem, stream) == (("f", "fn"), (2, 1, 1), (256, 1, 1), 1024, 77)
    assert slots[:4] == [0x1000, 0x2000 + 64, 0x7000, 0.25]
