"""nbkernels' own kernels as cubins: compiled once per (kernel, signature, arch), cached on disk,
loaded with the driver, and launched without numba's per-call argument machinery.

numba-cuda's dispatcher costs 13-23 us of host time per launch (measured on an H200) and
recompiles every kernel in every new process (15 s for a GEMM variant). Here a kernel is
compiled with ``compile_ptx`` for the device's arch, linked to a cubin by numba-cuda's linker
(nvJitLink where present, so PTX newer than the driver still loads), stored under
``$NBKERNELS_CACHE_DIR`` (default ``~/.cache/nbkernels``), and launched through
``cuLaunchKernel`` with arguments packed as numba's kernel ABI lays them out.
"""
from __future__ import annotations

import contextlib
import functools
import ctypes
import hashlib
import importlib.metadata as md
import json
import os
import re
import threading
from pathlib import Path

from . import __version__
from .arch import Arch
from .errors import NbkernelsError

_lock = threading.Lock()
_loaded: dict = {}  # (key, device) -> CUfunction
_mode = threading.local()


@contextlib.contextmanager
def driver_jit():
    """Within this block :func:`build` hands the driver PTX, JIT-compiled when loaded, instead
    of a cubin: how code built for an older arch (``validate --as sm_80``) runs on a newer GPU,
    as it would from a package that shipped PTX for that arch."""
    prev = getattr(_mode, "ptx", False)
    _mode.ptx = True
    try:
        yield
    finally:
        _mode.ptx = prev


def _image_kind() -> str:
    return "ptx" if getattr(_mode, "ptx", False) else "cubin"


def cache_dir() -> Path:
    return Path(os.environ.get("NBKERNELS_CACHE_DIR") or Path.home() / ".cache" / "nbkernels")


def _dist(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "-"


_SOURCE_HASH = None


def source_hash() -> str:
    """Hash of nbkernels' own sources: any edit to a kernel or intrinsic invalidates the cache."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        h = hashlib.sha256()
        root = Path(__file__).resolve().parent
        for p in sorted(root.rglob("*.py")):
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
        _SOURCE_HASH = h.hexdigest()[:16]
    return _SOURCE_HASH


def cache_key(name: str, parts, arch: Arch, cluster=None) -> str:
    """The disk-cache name of a build; ``cluster`` (a kernel's ``nbk_cluster`` shape, which
    :func:`build` writes into the PTX) names it too."""
    from numba.cuda.cudadrv.driver import driver

    ident = [__version__, source_hash(), _dist("numba-cuda"), _dist("nvidia-nvvm"),
             _dist("nvidia-nvjitlink"), str(driver.get_version()), str(arch), name,
             repr(parts), _image_kind()]
    if cluster is not None:
        ident.append(["cluster", list(cluster)])
    if arch.suffix:  # assembled by ptxas where one reads the PTX: its version names the cubin
        ident.append(repr(_tool_isa()))
    return name + "-" + hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:24]


#: How each kernel built in this process was assembled, by cache key (``explain`` reports it).
ROUTES: dict = {}


class SerializedWgmmaWarning(UserWarning):
    """An arch-specific (sm_90a) kernel went through nvJitLink, which assembles it as a
    relocatable unit: ptxas then serializes every wgmma and ignores setmaxnreg."""


@functools.lru_cache(maxsize=None)
def _tool_isa():
    """(ptxas version, newest PTX ISA it reads) of the ptxas nbkernels would use, or None."""
    from . import compat, toolchain

    path = toolchain.find_tool("ptxas")
    v = compat.vtuple(toolchain.tool_version(path)) if path else None
    return (v, compat.max_ptx_isa(v)) if v else None


def whole_program_route(ptx: str) -> str | None:
    """How to assemble an arch-specific kernel as a whole program: ``"ptxas X.Y"`` (a ptxas that
    reads this PTX ISA), ``"driver JIT"`` (the driver reads it), or None (only nvJitLink is
    left). nvJitLink compiles PTX as a relocatable unit, and for such units ptxas 13.x
    serializes wgmma ("presence of Extern calls", C7509) and ignores setmaxnreg (C7504): the
    Hopper GEMM ran at 68% of the tensor pipe that way (docs/perf-notes.md, s3)."""
    from numba.cuda.cudadrv.driver import driver

    from . import compat, toolchain

    tool = _tool_isa()
    return compat.whole_program_assembler(toolchain.ptx_isa_of(ptx), tool and tool[0],
                                          driver.get_version())


def _warn_serialized(key):
    import warnings

    warnings.warn(
        f"{key}: no ptxas that reads NVVM's PTX and a driver older than it, so this sm_90a "
        "kernel is linked by nvJitLink, which serializes its wgmma (about 0.7x speed): "
        "pip install 'cuda-toolkit[nvcc]' of the same release as nvidia-nvvm (the cu13 extra "
        "does), or set NBKERNELS_PTXAS", SerializedWgmmaWarning, stacklevel=3)


def cluster_ptx(ptx: str, cluster) -> str:
    """``ptx`` with its kernel entry declared for clusters of ``cluster`` blocks: the launch
    must give that shape (``.explicitcluster``: a launch without one fails instead of running
    blocks whose peers do not exist) and ptxas knows it (``.reqnctapercluster``)."""
    m = re.search(r"\.entry\s+[\w$.]+\s*\([^)]*\)", ptx)
    if not m:
        raise NbkernelsError("cluster kernel: compiled PTX has no kernel entry")
    x, y, z = (int(v) for v in cluster)
    return (ptx[:m.end()] + f"\n.explicitcluster\n.reqnctapercluster {x}, {y}, {z}"
            + ptx[m.end():])


def flat_params(t) -> int:
    """How many kernel parameters numba's ABI gives an argument of numba type ``t``: an array
    is meminfo, parent, nitems, itemsize, data, then its shape and strides (:func:`array_params`);
    a tuple its members'; anything else one."""
    from numba.core import types

    if isinstance(t, types.Array):
        return 5 + 2 * t.ndim
    if isinstance(t, types.BaseTuple):
        return sum(flat_params(m) for m in t)
    return 1


def by_value_ptx(ptx: str, sig, by_value) -> str:
    """``ptx`` with the data of the array arguments named in ``by_value`` (``{argument
    position: bytes}``) passed in the launch's parameters instead of through a pointer:
    the data parameter becomes ``.param .align 64 .b8 NAME[bytes]``, and where the kernel
    loaded the pointer it takes the parameter's generic address (``cvta.param``). This is
    CUDA's ``__grid_constant__``: what TMA's tensor maps are meant to travel in (no device
    copy, nothing to keep alive after the launch, captured by a CUDA graph with the launch).
    The kernel's code is unchanged: it indexes the array as before, at an address in the
    parameter space (read-only)."""
    from numba.core import types

    m = re.search(r"\.entry\s+([\w$.]+)\s*\(", ptx)
    if not m:
        raise NbkernelsError("by-value arguments: compiled PTX has no kernel entry")
    entry = m.group(1)
    for pos, nbytes in sorted(by_value.items()):
        if not 0 <= pos < len(sig):
            raise NbkernelsError(f"by-value argument {pos}: expected a position below "
                                 f"{len(sig)} (the signature's length), got {pos}")
        if not isinstance(sig[pos], types.Array):
            raise NbkernelsError(f"by-value argument {pos}: expected an array type, got "
                                 f"{sig[pos]}")
        name = f"{entry}_param_{sum(flat_params(t) for t in sig[:pos]) + 4}"  # its data
        decl = re.compile(rf"\.param\s+\.u64\s+(?:\.ptr\s+\S+\s+)?{re.escape(name)}(?=[,\s)])")
        ptx, n = decl.subn(f".param .align 64 .b8 {name}[{int(nbytes)}]", ptx, count=1)
        if n != 1:
            raise NbkernelsError(f"by-value argument {pos}: expected the parameter {name} "
                                 "declared as .u64 in the PTX, found no such declaration")
        load = re.compile(rf"[ \t]*ld\.param\.u64\s+(%rd\d+),\s*\[{re.escape(name)}\];[ \t]*\n")
        regs = load.findall(ptx)
        ptx = load.sub("", ptx)
        rest = len(re.findall(rf"{re.escape(name)}\b", ptx)) - 1  # less the declaration
        if not regs or rest:
            raise NbkernelsError(f"by-value argument {pos}: expected {name} to be read only "
                                 f"by ld.param.u64, found {len(regs)} such loads and {rest} "
                                 "other use(s) in the PTX")
        # The address is taken again right before each instruction that reads it: one
        # cvta at the entry kept it live through the whole kernel, and ptxas spilled the
        # split tail's consumers for it (an ld.param it rematerializes for free).
        reads = [(r, re.compile(rf"{re.escape(r)}(?!\d)"),
                  re.compile(rf"\s*(@!?%p\d+\s+)?[a-z][\w.:]*\s+{re.escape(r)}\s*,"))
                 for r in regs]
        lines = []
        for line in ptx.split("\n"):
            for r, read, write in reads:
                if not read.search(line):
                    continue
                if write.match(line):
                    raise NbkernelsError(f"by-value argument {pos}: expected {r} (its "
                                         f"address) to be written once, found: {line.strip()}")
                lines.append(f"\tcvta.param.u64 {r}, {name};")
            lines.append(line)
        ptx = "\n".join(lines)
    return ptx


def entry_ptx(ptx: str, pyfunc, sig) -> str:
    """The PTX of a kernel as nbkernels assembles it: with the by-value arguments its Python
    function declares (``nbk_by_value``, :func:`by_value_ptx`) rewritten. Every path that
    turns one of nbkernels' kernels into PTX (the launcher's :func:`build`, ``nbkernels
    compile``, the tests' ``toolchain.compile_ptx_for``) goes through here."""
    by_value = getattr(pyfunc, "nbk_by_value", None)
    return by_value_ptx(ptx, sig, by_value) if by_value else ptx


def by_value_params(a, nbytes: int):
    """An array argument that :func:`by_value_ptx` passes by value, as numba's fields with the
    data field holding the array's ``nbytes`` bytes themselves (``a``: a C-contiguous NumPy
    array on the host)."""
    import numpy as np

    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or a.nbytes != nbytes:
        raise NbkernelsError(f"by-value argument: expected a C-contiguous NumPy array of "
                             f"{nbytes} bytes, got {type(a).__name__} "
                             f"of {getattr(a, 'nbytes', '?')} bytes")
    vals, typs = array_params(0, a.shape, a.strides, a.itemsize)
    vals[4], typs[4] = a.tobytes(), ctypes.c_ubyte * nbytes
    return vals, typs


def build(pyfunc, sig, arch: Arch, key: str, launch_bounds=None,
          cluster=None) -> tuple[bytes, str]:
    """(cubin, entry name) for ``pyfunc`` compiled for ``sig`` on ``arch``, from disk if cached;
    NUL-terminated PTX instead of the cubin inside :func:`driver_jit`. Arch-specific targets
    (sm_90a) are assembled as whole programs (:func:`whole_program_route`). ``cluster``: the
    entry is declared for clusters of that shape (:func:`cluster_ptx`)."""
    kind = _image_kind()
    path = cache_dir() / f"{key}.{kind}"
    meta = cache_dir() / f"{key}.json"
    if path.exists() and meta.exists():
        try:
            info = json.loads(meta.read_text())
            ROUTES[key] = info.get("route", "?")
            return path.read_bytes(), info["entry"]
        except (OSError, ValueError, KeyError):
            pass  # a damaged entry is rebuilt below
    from numba.cuda.cudadrv.driver import _Linker

    from . import toolchain

    ptx = toolchain.compile_ptx_for(pyfunc, sig, arch, launch_bounds)
    if cluster is not None:
        ptx = cluster_ptx(ptx, cluster)
    m = re.search(r"\.entry\s+([\w$.]+)\s*\(", ptx)
    if not m:
        raise NbkernelsError(f"{key}: compiled PTX has no kernel entry")
    route = whole_program_route(ptx) if arch.suffix and kind == "cubin" else None
    ROUTES[key] = route or ("driver JIT" if kind == "ptx" else "nvJitLink")
    if kind == "ptx" or route == "driver JIT":
        cubin = ptx.encode() + b"\0"  # cuModuleLoadData reads PTX as a C string
    elif route is not None and route.startswith("ptxas"):
        cubin = toolchain.assemble(ptx, arch, toolchain.find_tool("ptxas")).cubin
    else:
        if arch.suffix:
            _warn_serialized(key)
        linker = _Linker(cc=arch.cc)
        linker.add_ptx(ptx.encode())
        try:
            linked = linker.complete()  # a cuda.core ObjectCode in numba-cuda 0.30
        except Exception as e:
            from . import compat

            compat.raise_link_failure(e, ptx, arch)  # a diagnosed error where versions explain it
            raise
        cubin = bytes(getattr(linked, "code", linked))
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        # both files through a rename: processes started together (one per GPU) that build
        # the same kernel never read the other's half-written file
        for dest, data in ((path, cubin), (meta, json.dumps(
                {"entry": m.group(1), "arch": str(arch), "route": ROUTES[key]}).encode())):
            tmp = dest.with_name(f"{dest.name}.tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, dest)
    except OSError:
        pass  # a read-only home still runs, it just compiles again next time
    return cubin, m.group(1)


def _check(result, what):
    err = result[0] if isinstance(result, tuple) else result
    from cuda.bindings import driver as drv

    if err != drv.CUresult.CUDA_SUCCESS:
        _, msg = drv.cuGetErrorString(err)
        raise NbkernelsError(f"{what} failed: {err.name}: {msg.decode() if msg else ''}")
    return result[1] if isinstance(result, tuple) and len(result) == 2 else result


def function(key: str, cubin: bytes, entry: str, smem: int):
    """The loaded CUfunction of a cubin on the current device (loaded once per device)."""
    from cuda.bindings import driver as drv
    from numba import cuda

    dev = cuda.get_current_device().id
    f = _loaded.get((key, dev))
    if f is not None:
        if smem > _smem_set[(key, dev)]:  # a larger launch than the first
            _allow_smem(f[1], key, dev, smem)
        return f
    with _lock:
        f = _loaded.get((key, dev))
        if f is None:
            cuda.current_context()  # the primary context numba, CuPy and torch share
            from . import compat

            module = compat.load_module(cubin, key)  # refusals come back diagnosed
            f = _check(drv.cuModuleGetFunction(module, entry.encode()), f"finding {entry}")
            # without the attribute a launch may use 48 KB of shared memory *in all*: the
            # dynamic part may not exceed 48 KB less the kernel's static shared memory
            A = drv.CUfunction_attribute
            static = _check(drv.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                            f"{key}: static shared memory")
            allowed = _check(drv.cuFuncGetAttribute(
                A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f), f"{key}: shared memory")
            _smem_set[(key, dev)] = min(int(allowed), 48 * 1024 - int(static))
            if smem > _smem_set[(key, dev)]:
                _allow_smem(f, key, dev, smem)
            _loaded[(key, dev)] = (module, f)
            f = _loaded[(key, dev)]
    return f


_smem_set: dict = {}  # (key, device) -> dynamic shared memory the function is allowed now


def _allow_smem(f, key, dev, smem):
    from cuda.bindings import driver as drv

    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    _check(drv.cuFuncSetAttribute(f, attr, smem), f"{key}: {smem} B shared memory")
    _smem_set[(key, dev)] = smem


# --- numba's kernel ABI ----------------------------------------------------------------------
VOIDP, I64, I32, F32, F64 = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_float,
                             ctypes.c_double)


def array_params(ptr: int, shape, strides_bytes, itemsize: int):
    """An array argument as numba lays it out: meminfo, parent, nitems, itemsize, data,
    shape..., strides... (bytes)."""
    n = 1
    for d in shape:
        n *= int(d)
    vals = [0, 0, n, itemsize, ptr, *[int(d) for d in shape], *[int(s) for s in strides_bytes]]
    typs = [VOIDP, VOIDP, I64, I64, VOIDP] + [I64] * (2 * len(shape))
    return vals, typs


class PackedArgs:
    """Kernel arguments held in ctypes storage, with the ``void*[]`` cuLaunchKernel takes.

    Built once per launch shape; a repeat call only overwrites the fields that changed
    (data pointers, alpha, beta) by assigning ``slots[i].value`` (a by-value field, a ctypes
    array, by copying its bytes in) and launches with :func:`launch_packed`.
    """

    def __init__(self, values, ctypes_):
        # a by-value field (a ctypes array: by_value_params) is filled from its bytes
        self.slots = [ct.from_buffer_copy(v) if issubclass(ct, ctypes.Array) else ct(v)
                      for v, ct in zip(values, ctypes_)]
        self.ptrs = (ctypes.c_void_p * len(self.slots))(
            *[ctypes.addressof(s) for s in self.slots])
        self.address = ctypes.addressof(self.ptrs)


_drv = _OK = None  # cuda.bindings.driver and CUDA_SUCCESS, set by the first launch (an
# import statement per launch costs ~0.5 us, a tenth of a small call: perf-notes r9)


def _driver():
    global _drv, _OK
    from cuda.bindings import driver

    _drv, _OK = driver, driver.CUresult.CUDA_SUCCESS
    return driver


def launch_packed(fn, grid, block, smem: int, stream: int, packed: PackedArgs):
    """``cuLaunchKernel`` on a packed argument block; ``block`` is a 3-tuple. A function record
    with a third entry, a cluster shape (``runner.launch_jit`` adds it for kernels with
    ``nbk_cluster``), launches through ``cuLaunchKernelEx`` with that cluster dimension."""
    drv = _drv or _driver()
    if len(fn) > 2 and fn[2] is not None:
        config = cluster_config(grid, block, smem, fn[2])
        config.hStream = stream
        err = drv.cuLaunchKernelEx(config, fn[1], packed.address, 0)
        if (err[0] if isinstance(err, tuple) else err) != drv.CUresult.CUDA_SUCCESS:
            _check(err, f"cuLaunchKernelEx (grid {tuple(grid)} in clusters of {tuple(fn[2])}, "
                        f"{smem} B shared memory per block)")
        return
    err = drv.cuLaunchKernel(fn[1], grid[0], grid[1], grid[2], block[0], block[1], block[2],
                             smem, stream, packed.address, 0)
    if err[0] != _OK:
        _check(err, "cuLaunchKernel")


def _cupy_launch_kernel():
    """CuPy's Cython ``cuLaunchKernel`` wrapper where CuPy is already imported, else None. On
    the H200's host it costs 3.0-3.3 us a launch against 3.4-3.9 us through cuda-bindings
    (session 12, run 5: ctypes is slower than both, 4.4-4.7 us)."""
    import sys

    cupy = sys.modules.get("cupy")
    return getattr(getattr(getattr(cupy, "cuda", None), "driver", None), "launchKernel", None)


def bind(fn, grid, block, smem: int, packed: PackedArgs):
    """This launch with everything but the stream bound: a function of the stream handle that
    launches the packed block's current contents. For repeat calls, where the ~0.3 us that
    :func:`launch_packed` spends finding its arguments is a few percent of the call; through
    CuPy's launch wrapper where CuPy is loaded (another ~0.5 us)."""
    drv = _drv or _driver()
    if len(fn) > 2 and fn[2] is not None:
        return lambda stream: launch_packed(fn, grid, block, smem, stream, packed)
    cu, ok, f, addr = drv.cuLaunchKernel, _OK, fn[1], packed.address
    g0, g1, g2 = (int(v) for v in grid)
    b0, b1, b2 = (int(v) for v in block)
    smem = int(smem)
    fast = _cupy_launch_kernel()
    try:
        handle = int(f)  # the CUfunction's raw handle
    except (TypeError, ValueError):
        fast = None

    if fast is not None:  # the path is chosen once here, not on every launch
        def go(stream):
            try:
                fast(handle, g0, g1, g2, b0, b1, b2, smem, stream, addr, 0)
            except Exception as e:  # CuPy's CUDADriverError: the same typed error as below
                raise NbkernelsError(f"cuLaunchKernel failed: {e}") from e
    else:
        def go(stream):
            err = cu(f, g0, g1, g2, b0, b1, b2, smem, stream, addr, 0)
            if err[0] != ok:
                _check(err, "cuLaunchKernel")

    go.packed = packed  # addr points into it: it lives as long as the launch can be made
    if fast is not None:  # what go calls, for replays that write the call out themselves
        go.direct = (fast, handle, g0, g1, g2, b0, b1, b2, smem, addr)
    return go


_configs: dict = {}  # (grid, block, smem, cluster) -> CUlaunchConfig (the stream set per launch)


def cluster_config(grid, block, smem: int, cluster):
    """A ``CUlaunchConfig`` with the cluster dimension attribute (cached by shape)."""
    key = (tuple(grid), tuple(block), int(smem), tuple(cluster))
    config = _configs.get(key)
    if config is None:
        from cuda.bindings import driver as drv

        config = drv.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = (int(v) for v in grid)
        config.blockDimX, config.blockDimY, config.blockDimZ = (int(v) for v in block)
        config.sharedMemBytes = int(smem)
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dims = attr.value.clusterDim
        dims.x, dims.y, dims.z = (int(v) for v in cluster)
        config.attrs = [attr]
        config.numAttrs = 1
        if len(_configs) > 256:
            _configs.clear()
        _configs[key] = config
    return config
