"""``python -m nbkernels doctor [--json]``: what CUDA stack this process would use, and what will
fail on it, with a remedy in plain words.

:func:`collect` gathers the facts (each probe on its own, so one missing piece never hides the
others); :func:`nbkernels.compat.diagnose` judges them. Exit status 1 when a diagnosis is an
error (something will fail), else 0: no GPU is not an error.
"""
from __future__ import annotations

import importlib
import importlib.metadata as md
import json
import os
import re
from dataclasses import asdict

from .compat import Facts, Gpu, diagnose, failing, ptx_route, vstr, vtuple, max_ptx_isa

PACKAGES = ("numba", "numba-cuda", "llvmlite", "numpy", "ml_dtypes", "cuda-bindings", "cuda-core",
            "nvidia-nvvm", "nvidia-nvjitlink", "nvidia-cuda-nvcc", "cupy-cuda13x",
            "cupy-cuda12x", "cupy", "torch", "tqdm")


def _dist(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _loaded_library(fragment: str) -> str | None:
    """Real path of a shared library this process has mapped (Linux), e.g. ``libcuda.so``."""
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                path = line.split()[-1] if line.strip() else ""
                if fragment in os.path.basename(path):
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


def parse_kernel_driver(text: str) -> str | None:
    """The driver version in /proc/driver/nvidia/version or /sys/module/nvidia/version text."""
    m = re.search(r"(?<![\d.])(\d{3,}\.\d+(?:\.\d+)?)(?![\d.])", text)
    return m.group(1) if m else None


def user_driver_of(libcuda_path: str) -> str | None:
    """The version in the user-mode driver's file name (``libcuda.so.580.159.04``)."""
    m = re.search(r"libcuda\.so\.(\d{3,}\.\d+(?:\.\d+)?)$", libcuda_path or "")
    return m.group(1) if m else None


def _kernel_driver() -> str | None:
    """The kernel module's version: what the user-mode libcuda must match (or forward-compat)."""
    for path in ("/proc/driver/nvidia/version", "/sys/module/nvidia/version"):
        try:
            with open(path) as fh:
                found = parse_kernel_driver(fh.read())
        except OSError:
            continue
        if found:
            return found
    return None


def _driver(f: Facts) -> None:
    try:
        from cuda.bindings import driver as drv

        err, ver = drv.cuDriverGetVersion()
    except Exception as e:  # no libcuda at all: cuda.pathfinder raises
        f.driver_error = f"{type(e).__name__}: {e}"
        return
    if err != drv.CUresult.CUDA_SUCCESS:
        f.driver_error = err.name
        return
    f.driver_cuda = (ver // 1000, ver % 1000 // 10)
    f.driver_library = _loaded_library("libcuda.so")
    f.user_driver = user_driver_of(f.driver_library)
    (err,) = drv.cuInit(0)
    if err != drv.CUresult.CUDA_SUCCESS:
        f.init_error = err.name
        return
    _, count = drv.cuDeviceGetCount()
    attr = drv.CUdevice_attribute
    for i in range(count):
        _, dev = drv.cuDeviceGet(i)
        _, name = drv.cuDeviceGetName(256, dev)
        _, major = drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        _, minor = drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        f.gpus.append(Gpu(i, name.split(b"\0")[0].decode(errors="replace"), (major, minor)))


_NVVM = None


def _nvvm_probe():
    """(release, PTX ISA, where, error) of the NVVM numba-cuda uses, from a probe kernel's PTX
    header ("Cuda compilation tools, release 13.4" and ``.version 9.4``)."""
    global _NVVM
    if _NVVM is None:
        where = None
        try:
            from numba import cuda
            from numba.cuda.cuda_paths import get_cuda_paths

            p = get_cuda_paths().get("nvvm")
            where = f"{p.info} (found via {p.by})" if p is not None and p.info else None

            def probe():
                pass

            ptx, _ = cuda.compile_ptx(probe, (), cc=(7, 5))
            rel = re.search(r"release (\d+)\.(\d+)", ptx)
            isa = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
            _NVVM = ((int(rel.group(1)), int(rel.group(2))) if rel else None,
                     (int(isa.group(1)), int(isa.group(2))) if isa else None, where, None)
        except Exception as e:
            _NVVM = (None, None, where, f"{type(e).__name__}: {e}")
    return _NVVM


def _nvjitlink(f: Facts) -> None:
    try:
        from cuda.bindings import nvjitlink

        f.nvjitlink = tuple(nvjitlink.version())
    except Exception:
        return  # absent, or older than 12.3 (no version symbol): cuda.core uses the driver
    f.nvjitlink_where = _loaded_library("libnvJitLink")


def _ptxas(f: Facts) -> None:
    from . import toolchain

    path = toolchain.find_tool("ptxas")
    if path is not None:
        f.ptxas, f.ptxas_where = vtuple(toolchain.tool_version(path)), str(path)


def _packages() -> dict:
    pk = {name: _dist(name) for name in PACKAGES}
    cupy = next((n for n in ("cupy-cuda13x", "cupy-cuda12x") if pk.get(n)), None)
    if cupy:
        pk["cupy-cuda"] = cupy[len("cupy-cuda"):-1] + ".0"
    if pk.get("torch"):
        m = re.search(r"\+cu(\d+)(\d)$", pk["torch"])
        if m:
            pk["torch-cuda"] = f"{m.group(1)}.{m.group(2)}"
        else:
            try:  # default PyPI wheels carry no +cuXYZ tag; torch.version.cuda says it
                cuda = importlib.import_module("torch.version").cuda
                pk["torch-cuda"] = cuda
            except Exception:
                pass
    return pk


def collect(probe_nvvm: bool = True, packages: bool = True) -> Facts:
    """The facts of this process's CUDA stack; never raises."""
    from numba.cuda import config

    f = Facts(simulator=bool(config.ENABLE_CUDASIM))
    _driver(f)
    f.kernel_driver = _kernel_driver()
    try:
        from cuda.bindings import runtime

        err, ver = runtime.cudaRuntimeGetVersion()
        f.runtime_cuda = (ver // 1000, ver % 1000 // 10)
        lib = _loaded_library("libcudart")
        f.runtime_where = f"cuda.bindings.runtime of cuda-bindings {_dist('cuda-bindings')}" + (
            f"; libcudart mapped in this process: {lib}" if lib else "")
    except Exception:
        pass
    if probe_nvvm:
        f.nvvm_release, f.nvvm_ptx_isa, f.nvvm_where, f.nvvm_error = _nvvm_probe()
    _nvjitlink(f)
    _ptxas(f)
    if packages:
        f.packages = _packages()
    return f


def _device_arch(f: Facts):
    from .arch import Arch

    if f.simulator or not f.gpus:
        return None
    major, minor = f.gpus[0].cc
    return Arch(major, minor, "a" if (major, minor) == (9, 0) else "")


def dispatch_rows(f: Facts) -> list:
    """(operation, dtype, variant, why) for every public operation, from each kernel family."""
    from .aot import families

    arch = _device_arch(f)
    rows = []
    for fam in families():
        if hasattr(fam, "dispatch"):
            rows += [tuple(r) for r in fam.dispatch(arch)]
    return rows


def _route_text(f: Facts) -> str:
    if f.nvvm_ptx_isa is None:
        return "no NVVM: nothing is compiled"
    if f.driver_cuda is None:
        return "no driver here"
    route, why = ptx_route(f)
    reads = f"this driver reads PTX ISA up to {vstr(max_ptx_isa(f.driver_cuda))}"
    if route == "nvjitlink":
        return (f"{reads}; nvJitLink compiles NVVM's PTX to cubins" +
                (" (the driver could not JIT it itself)" if why == "bridged" else
                 " (the driver could also JIT it directly)"))
    if route == "driver":
        return f"{reads}; no nvJitLink: the driver JIT-compiles NVVM's PTX"
    return f"{reads}; NVVM's PTX cannot be loaded here (see diagnosis)"


def report(f: Facts, rows, diagnoses) -> str:
    na = "not found"
    lines = ["GPUs"]
    if f.gpus:
        lines += [f"  {g.index}  {g.name}  compute capability {vstr(g.cc)}" for g in f.gpus]
    else:
        lines.append("  none" + (f" ({f.init_error or f.driver_error})"
                                 if (f.init_error or f.driver_error) else ""))
    drv = (f"supports CUDA {vstr(f.driver_cuda)}; libcuda {f.user_driver or '?'} at "
           f"{f.driver_library or '?'}" if f.driver_cuda else na)
    runtime = f"{vstr(f.runtime_cuda)} ({f.runtime_where})" if f.runtime_cuda else na
    nvvm = (f"{vstr(f.nvvm_release)}, writes PTX ISA {vstr(f.nvvm_ptx_isa)}, at {f.nvvm_where}"
            if f.nvvm_ptx_isa else f"{na} ({f.nvvm_error})")
    jl = f"{vstr(f.nvjitlink)} at {f.nvjitlink_where}" if f.nvjitlink else na
    ptxas = f"{vstr(f.ptxas)} at {f.ptxas_where}" if f.ptxas else na
    lines += ["Driver", f"  user-mode     {drv}", f"  kernel-mode   {f.kernel_driver or na}",
              "Toolchain", f"  CUDA runtime  {runtime}", f"  NVVM          {nvvm}",
              f"  nvJitLink     {jl}", f"  PTX loading   {_route_text(f)}",
              f"  ptxas         {ptxas}", "Packages",
              "  " + ", ".join(f"{k} {v}" for k, v in f.packages.items() if v)]
    if rows:
        arch = _device_arch(f)
        lines.append(f"Dispatch on {arch or 'no GPU (as planned without one)'}")
        lines += [f"  {op:10s} {dt:22s} {var:6s} {why}" for op, dt, var, why in rows]
    lines.append("Diagnosis")
    if not diagnoses:
        lines.append("  ok: nothing here will fail")
    for d in diagnoses:
        lines.append(f"  {d.severity.upper():7s} [{d.code}] {d.what}")
        if d.remedy:
            lines.append(f"          remedy: {d.remedy}")
    return "\n".join(lines)


def add_arguments(ap) -> None:
    ap.add_argument("--json", action="store_true", help="print the facts and diagnoses as JSON")


def main(args) -> int:
    f = collect()
    try:
        rows = dispatch_rows(f)
    except Exception as e:  # a broken family must not hide the version diagnosis
        rows = [("?", "?", "?", f"dispatch table failed: {type(e).__name__}: {e}")]
    diagnoses = diagnose(f)
    if getattr(args, "json", False):
        print(json.dumps({"facts": asdict(f), "dispatch": [list(r) for r in rows],
                          "diagnoses": [asdict(d) for d in diagnoses],
                          "ok": not failing(diagnoses)}, indent=2, default=str))
    else:
        print(report(f, rows, diagnoses))
    return 1 if failing(diagnoses) else 0
