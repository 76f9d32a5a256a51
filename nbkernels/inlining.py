"""Numba-IR inlining without its two unused IR copies, for nbkernels' own compiles.

nbkernels' kernels are built from nested ``inline="always"`` device functions. numba-cuda
0.30 inlines each call of one through ``InlineWorker.inline_function``: it runs the callee's
untyped passes (a fresh IR, held by nothing else) and hands it to ``inline_ir``, which deep-
copies it block by block twice: once "because it gets mutated", and once more to return an
unmutated original, which ``inline_function``'s callers (the ``InlineInlinables`` pass)
discard. Each copy of a block copies the function's whole variable scope, so the cost grows
with blocks x variables of everything under a call, at every level of nesting: 75% of a row
kernel's compile time (perf-notes c1, c6; NVIDIA/numba-cuda#688, the fix proposed in #689).

Inside :func:`lean_inlining` (every compile nbkernels starts: :mod:`nbkernels.launch`,
``nbkernels compile``, ``toolchain.compile_ptx_for``), ``inline_function`` inlines the fresh IR
without either copy. The PTX is the same (tests/test_inlining.py compares it); the
``callee_ir_original`` it returns is then the IR that was inlined, which no caller in numba-cuda
reads. Everything else, and every compile outside the context (a user's own kernels, another
thread's compiles, ``inline_ir`` called directly by the typed passes on IR they may keep), runs
numba-cuda's code unchanged. A numba-cuda whose inliner is laid out differently is left alone
(:func:`install` returns False), and compiles are as slow as before. ``NBKERNELS_LEAN_INLINING=0``
turns it off (numba-cuda's inliner everywhere).
"""
from __future__ import annotations

import copy
import os
import threading
from contextlib import contextmanager

_state = threading.local()  # active: nbkernels compile depth; skip: fresh IRs being inlined
_installed: bool | None = None
_lock = threading.Lock()


class _CopyModule:
    """Stands in for the ``copy`` module inside numba-cuda's inline_closurecall: its
    ``deepcopy`` returns its argument while this thread inlines a fresh IR, and is
    ``copy.deepcopy`` otherwise."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(x, memo=None):
        if getattr(_state, "skip", 0):
            return x
        return copy.deepcopy(x, memo)


def install() -> bool:
    """Put the lean ``inline_function`` in place (once); False where numba-cuda's inliner is
    not the one this was written against (numba-cuda 0.30: ``copy`` imported as a module and
    used only by ``inline_ir``'s block copies)."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = _patch()
    return _installed


def _patch() -> bool:
    import inspect

    try:
        from numba.cuda.core import inline_closurecall as icc
    except ImportError:
        return False
    worker = getattr(icc, "InlineWorker", None)
    original = getattr(worker, "inline_function", None)
    try:
        source = inspect.getsource(icc)
    except (OSError, TypeError):
        return False
    if original is None or getattr(icc, "copy", None) is not copy or \
            source.count("copy.deepcopy(") != 1 or "def copy_ir(" not in source or \
            list(inspect.signature(original).parameters) != \
            ["self", "caller_ir", "block", "i", "function", "arg_typs"]:
        return False

    def inline_function(self, caller_ir, block, i, function, arg_typs=None):
        if not getattr(_state, "active", 0):
            return original(self, caller_ir, block, i, function, arg_typs=arg_typs)
        callee_ir = self.run_untyped_passes(function)  # fresh: nothing else holds it
        _state.skip = getattr(_state, "skip", 0) + 1
        try:
            return self.inline_ir(caller_ir, block, i, callee_ir,
                                  function.__code__.co_freevars, arg_typs=arg_typs)
        finally:
            _state.skip -= 1

    inline_function.__doc__ = original.__doc__
    inline_function.nbk_original = original
    icc.copy = _CopyModule()
    worker.inline_function = inline_function
    return True


def enabled() -> bool:
    """False where ``NBKERNELS_LEAN_INLINING=0`` asks for numba-cuda's inliner everywhere."""
    return os.environ.get("NBKERNELS_LEAN_INLINING", "1").strip() != "0"


@contextmanager
def lean_inlining():
    """Compiles started by this thread inside the block inline without numba-cuda's unused
    IR copies (see the module docstring); re-entrant. ``NBKERNELS_LEAN_INLINING=0``: a no-op."""
    if not enabled():
        yield
        return
    install()
    _state.active = getattr(_state, "active", 0) + 1
    try:
        yield
    finally:
        _state.active -= 1
