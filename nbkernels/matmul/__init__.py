"""Tensor-core GEMM for numba-cuda: ``nbkernels.gemm(a, b)`` and ``@nbkernels.gemm`` epilogues."""
from __future__ import annotations

from .api import explain, plan
from .config import TileConfig
from .. import arrays, repeat
from . import fast, run
from .tuning import autotune
from .run import execute

_MAX_EXTRAS = 6


def gemm(a=None, b=None, c=None, *, alpha=1, beta=0, out=None, precision=None, stream=None,
         variant=None, tile=None):
    """``alpha * a @ b + beta * c`` with ``numpy.matmul`` shape rules; returns the caller's type.

    ``a`` (M x K or batch x M x K) and ``b`` (K x N or batch x K x N) are CuPy, NumPy or torch
    arrays, or any object with ``__cuda_array_interface__``; a batch of 1 broadcasts. dtypes:
    float16, bfloat16 (ml_dtypes in NumPy), float32 (``precision`` "3xtf32" (default: tensor
    cores with float32-level accuracy), "tf32" or "fp32"), int8 (int32 result), float64.
    ``c`` broadcasts to the result and has the result dtype. ``out`` receives the result in
    place. ``stream`` is a CuPy, torch or numba stream (default: the caller's current one).
    ``variant`` ("sm90a", "sm80", "sm75", "simt"; or env NBKERNELS_VARIANT) forces a kernel
    variant, and ``tile`` (a :class:`TileConfig`, or a ``WgmmaConfig`` for sm90a; or env
    NBKERNELS_TILE for the sm_80-class kernel) a tile configuration.

    Used as a decorator on ``def epilogue(acc, i, j, *extra)``, returns a fused GEMM
    ``fused(a, b, *extra, out=None, ...)`` that applies the epilogue to every accumulator
    (after alpha and beta * c) in registers, before the single store.
    """
    # A repeat call first (perf-notes h4): no wrapper frame, no planning.
    key, ptrs = fast.key_of(a, b, c, out, alpha, beta, precision, variant, tile)
    if key is not None:
        launcher = fast._FAST.get(key)
        if launcher is not None:  # (with stream=, it allocates from that stream's pool)
            res = launcher.fire(ptrs, a, c, out, alpha, beta, stream)
            if res is not repeat.DECLINED:  # (an out meeting an operand: the full path)
                return res
    if callable(a) and b is None and c is None and not hasattr(a, "shape"):
        return FusedGemm(a)
    if key is None and any(map(arrays.via_dlpack, (a, b, c, out))):  # (JAX, Paddle, ...)
        return arrays.call_with_dlpack(gemm, (a, b, c), dict(
            alpha=alpha, beta=beta, out=out, precision=precision, stream=stream,
            variant=variant, tile=tile))
    # On the arrays' GPU, made current for the call where another one is.
    with arrays.on_device(arrays.device_of(a)):
        if stream is None:
            return _gemm(a, b, c, alpha, beta, out, precision, None, variant, tile, key)
        # With a stream given, the call runs with it current: its copies and temporaries
        # come from that stream's pool, ordered with its kernels (as repeat.stream_ordered).
        with repeat.on_stream(a, stream):
            return _gemm(a, b, c, alpha, beta, out, precision, stream, variant, tile, key)


def _gemm(a, b, c, alpha, beta, out, precision, stream, variant, tile, key):
    """A call the repeat path did not take: plan, launch, and record the launches for
    repeat calls under ``key``."""
    p = plan(a, b, c, alpha=alpha, beta=beta, out=out, precision=precision, variant=variant,
             tile=tile)
    run._LAST.launches, run._LAST.workspace, run._LAST.maps, run._LAST.streamk = [], None, None, None
    try:
        result = execute(p, alpha, beta, stream)
        fast.remember(key, p, c, out is not None)
    finally:
        run._LAST.launches = None
    return result


class FusedGemm:
    """A GEMM with a fused epilogue ``epilogue(acc, i, j, *extra) -> value``."""

    def __init__(self, epilogue):
        from numba import cuda

        self.py_func = epilogue
        self.epilogue = cuda.jit(device=True, inline="always")(epilogue)
        self.__doc__ = epilogue.__doc__
        self.__name__ = getattr(epilogue, "__name__", "fused_gemm")

    @repeat.stream_ordered(1, "a")
    def __call__(self, a, b, *extra, c=None, alpha=1, beta=0, out=None, precision=None,
                 stream=None, variant=None, tile=None):
        from ..errors import NbkernelsError

        if len(extra) > _MAX_EXTRAS:
            raise NbkernelsError(
                f"{self.__name__}: at most {_MAX_EXTRAS} extra arguments, got {len(extra)}")
        p = plan(a, b, c, alpha=alpha, beta=beta, out=out, precision=precision, variant=variant,
                 tile=tile)
        return execute(p, alpha, beta, stream, self.epilogue, extra)

    def explain(self, a, b, *extra, **kwargs):
        kwargs.pop("stream", None)
        if arrays.via_dlpack(a) or arrays.via_dlpack(b):
            return arrays.call_with_dlpack(self.explain, (a, b) + extra, kwargs)
        with arrays.on_device(arrays.device_of(a)):
            return plan(a, b, **kwargs).describe() + f"\n  epilogue: {self.__name__} fused"


__all__ = ["gemm", "explain", "plan", "autotune", "FusedGemm", "TileConfig"]
