"""``python -m nbkernels info``: versions, device, compile target and tools, in one table."""
from __future__ import annotations

import importlib.metadata as md
import platform


def _version(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def collect() -> dict:
    from . import __version__, toolchain
    from .arch import device_arch
    from numba.cuda import config

    info = {
        "nbkernels": __version__,
        "python": platform.python_version(),
        **{d: _version(d) for d in ("numba", "numba-cuda", "llvmlite", "numpy", "ml_dtypes",
                                     "cuda-bindings", "nvidia-nvvm", "nvidia-nvjitlink",
                                     "cupy-cuda13x", "cupy-cuda12x", "torch")},
    }
    if config.ENABLE_CUDASIM:
        info["device"] = "simulator (NUMBA_ENABLE_CUDASIM=1)"
        info["compile target"] = "none: kernels run in numba's simulator"
    else:
        arch = device_arch()
        if arch is None:
            info["device"] = "no GPU: the simulator and offline compilation are available"
            info["compile target"] = "none: pass an arch to compile (e.g. sm_80)"
        else:
            from numba import cuda

            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
            info["device"] = f"{name} (compute capability {arch.major}.{arch.minor})"
            info["compile target"] = str(arch)
            try:
                info["driver CUDA version"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
            except Exception as e:  # pragma: no cover - depends on the driver
                info["driver CUDA version"] = f"unknown ({e})"
    try:
        from .intrinsics.factory import nvvm_ptx_isa

        info["NVVM writes PTX ISA"] = "%d.%d" % nvvm_ptx_isa()
    except Exception as e:
        info["NVVM writes PTX ISA"] = f"unknown ({type(e).__name__}: {e})"
    for tool in ("ptxas", "nvdisasm"):
        path = toolchain.find_tool(tool)
        info[tool] = f"{toolchain.tool_version(path)} at {path}" if path else "not found"
    info["inlining"] = inlining_state()
    return info


def inlining_state() -> str:
    """How nbkernels' compiles inline device functions (:mod:`nbkernels.inlining`)."""
    from . import inlining

    if not inlining.enabled():
        return "numba-cuda's own (NBKERNELS_LEAN_INLINING=0): row kernels compile 2-4x slower"
    if inlining.install():
        return "lean: numba-cuda's unused IR copies skipped (nbkernels.inlining)"
    return ("numba-cuda's own: this numba-cuda's inliner is not the one nbkernels.inlining "
            "knows; row kernels compile 2-4x slower")


def main(args=None) -> int:
    for k, v in collect().items():
        print(f"{k:22s} {v}")
    return 0
