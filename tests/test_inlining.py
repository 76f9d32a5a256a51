"""nbkernels.inlining: its compiles inline nested ``inline="always"`` device functions without
numba-cuda's two unused IR copies and give the same PTX; compiles outside it (a user's, another
thread's) still copy. CPU only: PTX for sm_80 without a GPU."""
import re
import threading

import pytest
from numba import cuda

from nbkernels import inlining, toolchain
from nbkernels.aot import numbered_out


@cuda.jit(device=True, inline="always")
def _leaf(x, i):
    if i % 3 == 0:
        return x * 2.0
    acc = x
    for k in range(i % 4):
        acc += k
    return acc


@cuda.jit(device=True, inline="always")
def _mid(x, i):
    return _leaf(x, i) + _leaf(x + 1.0, i + 1)


@cuda.jit(device=True, inline="always")
def _top(x, i):
    s = 0.0
    for j in range(4):
        s += _mid(x, i + j)
    return s


def _nested(out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = _top(out[i], i)


SIG = "void(float32[::1], int32)"


class _Counting:
    """The ``copy`` module, counting deepcopy calls (monkeypatched into nbkernels.inlining)."""

    def __init__(self):
        import copy

        self.copy, self.calls = copy, 0

    def __getattr__(self, name):
        return getattr(self.copy, name)

    def deepcopy(self, x, memo=None):
        self.calls += 1
        return self.copy.deepcopy(x, memo)


def _stock_ptx(func, sig, bounds=None):
    ptx, _ = cuda.compile_ptx(func, sig, cc=(8, 0), launch_bounds=bounds)
    return ptx


def test_the_patch_is_in_place_for_this_numba_cuda():
    # the numba-cuda this package pins (0.30) has the inliner it was written against: if this
    # fails after an upgrade, the compiles are as slow as before (not wrong); see the module
    assert inlining.install()
    from numba.cuda.core import inline_closurecall as icc

    assert isinstance(icc.copy, inlining._CopyModule)
    assert inlining._patch() is False  # installed once: a second attempt changes nothing


def test_lean_inlining_gives_the_same_ptx_without_copies(monkeypatch):
    inlining.install()
    counting = _Counting()
    monkeypatch.setattr(inlining, "copy", counting)
    stock = _stock_ptx(_nested, SIG)
    copies = counting.calls
    assert copies > 0  # outside the context: numba-cuda's copies, unchanged
    counting.calls = 0
    with inlining.lean_inlining():
        lean = _stock_ptx(_nested, SIG)
    assert counting.calls == 0
    assert numbered_out(lean) == numbered_out(stock)
    # the device functions' bodies are in the kernel (inlined), not called
    assert ".func" not in lean and len(re.findall(r"\badd(?:\.rn)?\.f64", lean)) > 4


def test_another_threads_compile_keeps_numba_cudas_copies(monkeypatch):
    inlining.install()
    counting = _Counting()
    monkeypatch.setattr(inlining, "copy", counting)
    got = {}

    def other():
        got["ptx"] = _stock_ptx(_nested, SIG)

    with inlining.lean_inlining():  # active in this thread only
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert counting.calls > 0 and ".entry" in got["ptx"]


def test_a_row_kernel_compiles_to_the_same_ptx_either_way():
    from nbkernels.arch import Arch
    from nbkernels.rows.aot import _build

    func, sig, bounds, _ = _build("swiglu", "f32", Arch.parse("sm_80"))
    stock = _stock_ptx(func, sig, bounds)
    lean = toolchain.compile_ptx_for(func, sig, "sm_80", launch_bounds=bounds)  # in the context
    from nbkernels.launch import entry_ptx

    assert numbered_out(lean) == numbered_out(entry_ptx(stock, func, sig))


@pytest.mark.parametrize("broken", ["copy", "source"])
def test_an_inliner_laid_out_otherwise_is_left_alone(monkeypatch, broken):
    import inspect

    from numba.cuda.core import inline_closurecall as icc

    inlining.install()
    before = icc.InlineWorker.inline_function
    if broken == "copy":  # already patched: copy is no longer the module
        pass
    else:
        real = inspect.getsource
        monkeypatch.setattr(inspect, "getsource", lambda obj: real(obj) + "\ncopy.deepcopy(x)\n")
        monkeypatch.setattr(icc, "copy", __import__("copy"))
    assert inlining._patch() is False
    assert icc.InlineWorker.inline_function is before


def test_the_switch_turns_it_off(monkeypatch):
    inlining.install()
    counting = _Counting()
    monkeypatch.setattr(inlining, "copy", counting)
    monkeypatch.setenv("NBKERNELS_LEAN_INLINING", "0")
    with inlining.lean_inlining():
        _stock_ptx(_nested, SIG)
    assert counting.calls > 0


def test_info_says_which_inliner_the_compiles_use(monkeypatch):
    from nbkernels import info

    assert info.inlining_state().startswith("lean:")
    monkeypatch.setenv("NBKERNELS_LEAN_INLINING", "0")
    assert "NBKERNELS_LEAN_INLINING=0" in info.inlining_state()
    monkeypatch.delenv("NBKERNELS_LEAN_INLINING")
    monkeypatch.setattr(inlining, "_installed", False)  # as install() leaves an unknown inliner
    assert "not the one nbkernels.inlining knows" in info.inlining_state()
