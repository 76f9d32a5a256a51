"""Dynamic shared memory above 48 KB for numba-cuda kernels.

A kernel may use more than 48 KB of dynamic shared memory only after its
``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`` has been raised, and numba-cuda
has no API for that (NVIDIA/numba-cuda#94). This is the one place nbkernels touches
numba-cuda internals for it: the compiled kernel's code library gives the loaded
``CUkernel``, whose attribute the driver sets per device.

Usage::

    kern = nbkernels.enable_large_shared_memory(my_kernel, (float32[:],), 100 * 1024)
    my_kernel[grid, block, stream, 100 * 1024](x)   # same signature -> same CUkernel

Inside the kernel, ``cuda.shared.array(0, dtype)`` views the dynamic allocation.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from numba import cuda

from .errors import NbkernelsError

_DEFAULT_LIMIT = 48 * 1024
SM90_OPTIN = 227 * 1024  # a compute-capability-9.0 block's opt-in limit (H100, H200)
_SIMULATED_OPTIN = SM90_OPTIN  # the simulator has no real limit: an sm_90 block's


def _simulated() -> bool:
    from numba.cuda import config

    return bool(config.ENABLE_CUDASIM)


_LIMITS: dict = {}
NO_GPU_LIMITS = (132, _SIMULATED_OPTIN)  # an H100/H200: what the simulator and offline plans assume


class _Cap(threading.local):
    block_smem = None  # planned_for: the target arch's per-block limit (a class default, so
    # reading it unset costs one attribute lookup)


_CAP = _Cap()


@contextmanager
def planned_for(arch):
    """Plan the launches made in this block (this thread) as for a GPU of ``arch``: no more
    shared memory per block than ``arch`` allows, nor than this GPU does (``validate --as
    sm_80`` on an H200 picks the tiles and buffers an A100's 163 KB blocks take)."""
    from .arch import limits

    prev = _CAP.block_smem
    _CAP.block_smem = limits(arch).block_smem
    try:
        yield
    finally:
        _CAP.block_smem = prev


def device_limits() -> tuple:
    """(SM count, largest opt-in dynamic shared memory per block) of the current device, read
    once per device; :data:`NO_GPU_LIMITS` in the simulator or without a GPU. Inside
    :func:`planned_for`, the shared memory is no more than the target's."""
    if _simulated() or not cuda.is_available():
        lim = NO_GPU_LIMITS
    else:
        dev = cuda.get_current_device()
        lim = _LIMITS.get(dev.id)
        if lim is None:
            lim = _LIMITS[dev.id] = (int(dev.MULTIPROCESSOR_COUNT),
                                     int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN))
    cap = _CAP.block_smem
    return lim if cap is None or cap >= lim[1] else (lim[0], cap)


def max_dynamic_shared_memory(device=None) -> int:
    """Largest dynamic shared memory (bytes) one block may opt in to on ``device``."""
    if _simulated():
        return _SIMULATED_OPTIN
    dev = device or cuda.get_current_device()
    return int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)


def enable_large_shared_memory(kernel, signature, nbytes: int, device=None):
    """Compile ``kernel`` for ``signature`` and let it launch with ``nbytes`` of dynamic smem.

    Returns the compiled kernel object. Launch through the dispatcher as usual with
    ``kernel[grid, block, stream, nbytes](...)`` and arguments of that signature.
    Raises :class:`NbkernelsError` when the device cannot give that much.
    """
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
        raise NbkernelsError(
            f"enable_large_shared_memory: nbytes must be a non-negative int, got {nbytes!r}"
        )
    limit = max_dynamic_shared_memory(device)
    if nbytes > limit:
        raise NbkernelsError(
            f"enable_large_shared_memory: nbytes ({nbytes}) exceeds what one block may use on "
            f"this device ({limit} bytes)"
        )
    if _simulated():
        return kernel
    if not hasattr(kernel, "compile"):
        raise NbkernelsError(
            f"enable_large_shared_memory: kernel must be a @cuda.jit dispatcher, got {type(kernel)}"
        )
    compiled = kernel.compile(signature)
    if nbytes > _DEFAULT_LIMIT:
        from numba.cuda.cudadrv.driver import binding, driver

        cufunc = compiled._codelibrary.get_cufunc()
        attr = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        driver.cuKernelSetAttribute(attr, nbytes, cufunc.handle, cufunc.device.id)
    return compiled
