"""Version rules of the CUDA stack nbkernels runs on, as data and pure functions.

:func:`diagnose` turns a :class:`Facts` record (driver, GPUs, NVVM, nvJitLink, ptxas, packages)
into a list of :class:`Diagnosis`; ``nbkernels doctor`` collects the facts (``doctor.collect``)
and prints both, and tests feed it invented version sets. :func:`load_module` and
:func:`raise_link_failure` apply the same rules when the driver or the linker refuses
nbkernels' code at run time. docs/compatibility.md explains each rule and its source.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .arch import MIN_ARCH
from .errors import ToolchainError

#: PTX ISA version that each CUDA release introduced (NVVM of that release writes it; a driver
#: or nvJitLink of that release is the oldest to read it). From the PTX ISA release history
#: (docs.nvidia.com/cuda/parallel-thread-execution, "Release Notes"), cross-checked against
#: cuda.bindings.utils.get_minimal_required_cuda_ver_from_ptx_ver (tests/test_doctor.py).
#: CUDA 12.6 added no PTX ISA version: it writes 8.5, like 12.5.
PTX_ISA_OF_CUDA = {
    (11, 0): (7, 0), (11, 1): (7, 1), (11, 2): (7, 2), (11, 3): (7, 3), (11, 4): (7, 4),
    (11, 5): (7, 5), (11, 6): (7, 6), (11, 7): (7, 7), (11, 8): (7, 8),
    (12, 0): (8, 0), (12, 1): (8, 1), (12, 2): (8, 2), (12, 3): (8, 3), (12, 4): (8, 4),
    (12, 5): (8, 5), (12, 6): (8, 5), (12, 7): (8, 6), (12, 8): (8, 7), (12, 9): (8, 8),
    (13, 0): (9, 0), (13, 1): (9, 1), (13, 2): (9, 2), (13, 3): (9, 3), (13, 4): (9, 4),
    (13, 5): (9, 5),
}

#: Oldest Linux driver branch of each CUDA major release (minor-version compatibility: any
#: toolkit of that major runs on it, PTX JIT of newer PTX excepted). CUDA Compatibility guide.
MIN_DRIVER_BRANCH = {11: 450, 12: 525, 13: 580}

#: cuda.core links with nvJitLink from 12.3 on and with the driver's cuLink* below that.
NVJITLINK_MIN = (12, 3)

#: (package, versions, other package, versions, what goes wrong, remedy). A version spec is a
#: (lowest, first excluded) pair of tuples; None leaves that side open.
KNOWN_BAD = [
    ("numpy", ((2, 5), None), "numba-cuda", ((0, 30), (0, 31)),
     "numba-cuda 0.30.x calls np.row_stack, which numpy 2.5 removed: the first kernel "
     "compile fails with AttributeError", "pip install 'numpy<2.5'"),
]


def vtuple(text, n: int = 2) -> tuple | None:
    """Leading numbers of a version string: ``"13.4.92"`` -> ``(13, 4)``; None if none."""
    if text is None:
        return None
    if isinstance(text, tuple):
        return text[:n]
    nums = re.findall(r"\d+", str(text).split("+")[0])
    return tuple(int(x) for x in nums[:n]) if nums else None


def vstr(v) -> str:
    return ".".join(map(str, v)) if v else "?"


def max_ptx_isa(cuda: tuple) -> tuple:
    """The newest PTX ISA a driver or nvJitLink of CUDA release ``cuda`` reads."""
    known = [isa for rel, isa in PTX_ISA_OF_CUDA.items() if rel <= tuple(cuda)]
    if tuple(cuda) > max(PTX_ISA_OF_CUDA) and cuda[0] >= 13:
        return (cuda[0] - 4, cuda[1])  # the 13.x rule (ISA 9.x), for releases after the table
    return max(known) if known else (0, 0)


def cuda_for_ptx_isa(isa: tuple) -> tuple:
    """The oldest CUDA release (driver or nvJitLink) that reads PTX ISA ``isa``."""
    rels = [rel for rel, v in PTX_ISA_OF_CUDA.items() if v >= tuple(isa)]
    return min(rels) if rels else (isa[0] + 4, isa[1])


@dataclass
class Gpu:
    index: int
    name: str
    cc: tuple


@dataclass
class Facts:
    """What ``nbkernels doctor`` found; every field may be None where it could not be found."""

    driver_cuda: tuple | None = None  # CUDA version the user-mode driver (libcuda) supports
    driver_library: str | None = None  # the libcuda file in use
    driver_error: str | None = None  # why libcuda could not be loaded
    user_driver: str | None = None  # libcuda's own version, e.g. "580.159.04"
    kernel_driver: str | None = None  # the kernel module's version
    init_error: str | None = None  # cuInit's CUresult name when it failed
    gpus: list = field(default_factory=list)
    runtime_cuda: tuple | None = None
    runtime_where: str | None = None
    nvvm_release: tuple | None = None
    nvvm_ptx_isa: tuple | None = None
    nvvm_where: str | None = None
    nvvm_error: str | None = None
    nvjitlink: tuple | None = None
    nvjitlink_where: str | None = None
    ptxas: tuple | None = None
    ptxas_where: str | None = None
    packages: dict = field(default_factory=dict)
    simulator: bool = False


@dataclass
class Diagnosis:
    code: str
    severity: str  # "error": something will fail; "warning"; "info"
    what: str
    remedy: str = ""

    def __str__(self):
        return f"{self.what}" + (f"\n  remedy: {self.remedy}" if self.remedy else "")


class CompatibilityError(ToolchainError):
    """The driver or linker refused nbkernels' code for a version reason; carries the diagnosis."""

    def __init__(self, what: str, diagnosis: Diagnosis | None, raw: str = ""):
        self.diagnosis = diagnosis
        self.raw = raw
        msg = what + (f": {diagnosis}" if diagnosis else "") + (f"\n  driver said: {raw}"
                                                                  if raw else "")
        super().__init__(msg)


def _major_branch(version: str | None):
    v = vtuple(version, 1)
    return v[0] if v else None


def _nvjitlink_usable(f: Facts) -> bool:
    return f.nvjitlink is not None and tuple(f.nvjitlink) >= NVJITLINK_MIN


def _pip_nvjitlink(rel: tuple) -> str:
    return (f"pip install 'nvidia-nvjitlink=={rel[0]}.{rel[1]}.*'" if rel[0] >= 13 else
            f"pip install 'nvidia-nvjitlink-cu{rel[0]}=={rel[0]}.{rel[1]}.*'")


def _pip_nvvm(rel: tuple) -> str:
    return (f"pip install 'nvidia-nvvm=={rel[0]}.{rel[1]}.*'" if rel[0] >= 13 else
            f"pip install 'nvidia-cuda-nvcc-cu{rel[0]}=={rel[0]}.{rel[1]}.*'")


def _driver_rules(f: Facts) -> list:
    out = []
    if f.simulator:
        out.append(Diagnosis("simulator", "info", "NUMBA_ENABLE_CUDASIM=1: kernels run in numba's "
                             "simulator; no GPU is used"))
    if f.driver_cuda is None and f.init_error is None:
        out.append(Diagnosis(
            "no-gpu", "info", "no CUDA driver library (libcuda.so) found: no GPU can be used; "
            "numba's simulator (NUMBA_ENABLE_CUDASIM=1) and `python -m nbkernels compile` work",
            "on a GPU machine, install the NVIDIA driver (in a container: run it with the NVIDIA "
            "container toolkit, e.g. `docker run --gpus all`)"))
        return out
    err = f.init_error
    user = f.user_driver or "?"
    kern = f.kernel_driver or "?"
    if err == "CUDA_ERROR_NO_DEVICE" or (err is None and not f.gpus):
        out.append(Diagnosis(
            "no-gpu", "info", "the CUDA driver sees no GPU: only numba's simulator and "
            "`python -m nbkernels compile` are available", "check CUDA_VISIBLE_DEVICES and "
            "nvidia-smi"))
    elif err == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE":
        out.append(Diagnosis(
            "forward-compat-unsupported", "error",
            f"error 804: the user-mode driver in use (libcuda {user} at {f.driver_library or '?'})"
            f" is newer than the kernel-mode driver ({kern}); that is CUDA forward compatibility "
            "(the cuda-compat package), which only data-center GPUs, select RTX server SKUs and "
            "Jetson support, and this GPU does not",
            "use the host's own libcuda: remove the compat directory (e.g. /usr/local/cuda/compat)"
            " from LD_LIBRARY_PATH / ld.so.conf in the container, or use an image whose CUDA is "
            "no newer than the host driver supports, or upgrade the host driver"))
    elif err == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH":
        out.append(Diagnosis(
            "driver-mismatch", "error", f"error 803: user-mode driver {user} and kernel-mode "
            f"driver {kern} are different versions", "reinstall the driver so both match (or "
            "reboot after a driver upgrade); in a container, let the NVIDIA container toolkit "
            "mount the host's libcuda instead of one baked into the image"))
    elif err == "CUDA_ERROR_STUB_LIBRARY":
        out.append(Diagnosis(
            "stub-driver", "error", f"the libcuda in use ({f.driver_library or '?'}) is the "
            "toolkit's link-time stub, not the driver", "remove the toolkit's lib64/stubs "
            "directory from LD_LIBRARY_PATH"))
    elif err is not None:
        out.append(Diagnosis("driver-init", "error", f"the CUDA driver failed to start: {err}",
                             "run nvidia-smi; reinstall or reload the driver"))
    elif _major_branch(f.user_driver) and _major_branch(f.kernel_driver) and \
            _major_branch(f.user_driver) != _major_branch(f.kernel_driver):
        out.append(Diagnosis(
            "forward-compat", "info", f"forward compatibility in use: user-mode driver {user} "
            f"over kernel-mode driver {kern}; this GPU accepts it"))
    for g in f.gpus:
        if tuple(g.cc) < MIN_ARCH:
            out.append(Diagnosis(
                "gpu-too-old", "error", f"GPU {g.index} ({g.name}) has compute capability "
                f"{vstr(g.cc)}; nbkernels needs {vstr(MIN_ARCH)} (Turing) or newer",
                "use another GPU (CUDA_VISIBLE_DEVICES) or numba's simulator"))
    return out


def ptx_route(f: Facts):
    """How NVVM's PTX becomes loadable code here: ("nvjitlink" | "driver" | None, reason).

    cuda.core's linker (which nbkernels' launcher uses) takes nvJitLink whenever one of 12.3+
    is present, else the driver's cuLink*, which JIT-compiles PTX inside the driver.
    """
    isa, drv = f.nvvm_ptx_isa, f.driver_cuda
    direct = drv is not None and isa is not None and max_ptx_isa(drv) >= tuple(isa)
    if _nvjitlink_usable(f):
        if max_ptx_isa(f.nvjitlink) < tuple(isa):
            return None, "nvjitlink-older-than-nvvm"
        if drv is not None and f.nvjitlink[0] > drv[0]:
            return None, "nvjitlink-newer-major"
        return "nvjitlink", "bridged" if not direct else "direct"
    return ("driver", "direct") if direct else (None, "ptx-too-new")


def _ptx_rules(f: Facts) -> list:
    if f.nvvm_error or f.nvvm_ptx_isa is None:
        return [Diagnosis(
            "nvvm-missing", "error", f"NVVM could not be used ({f.nvvm_error or 'not found'}): "
            "no kernel can be compiled", "pip install 'numba-cuda[cu13]' (driver 580+) or "
            "'numba-cuda[cu12]' (driver 525+), which bring NVVM")]
    isa, rel = tuple(f.nvvm_ptx_isa), f.nvvm_release or cuda_for_ptx_isa(f.nvvm_ptx_isa)
    route, why = ptx_route(f)
    drv = f.driver_cuda
    have_gpu = drv is not None and f.init_error is None and f.gpus
    sev = "error" if have_gpu else "warning"
    if why == "nvjitlink-older-than-nvvm":
        return [Diagnosis(
            why, sev, f"nvJitLink {vstr(f.nvjitlink)} reads PTX ISA up to "
            f"{vstr(max_ptx_isa(f.nvjitlink))}, but NVVM {vstr(rel)} writes PTX ISA {vstr(isa)}:"
            " every kernel link fails", f"{_pip_nvjitlink(rel)} (nvJitLink at least as new as "
            f"NVVM), or {_pip_nvvm(f.nvjitlink)} (NVVM no newer than nvJitLink)")]
    if drv is None:
        return []
    need = cuda_for_ptx_isa(isa)
    if why == "nvjitlink-newer-major":
        return [Diagnosis(
            why, sev, f"nvJitLink {vstr(f.nvjitlink)} builds CUDA {f.nvjitlink[0]} cubins, but "
            f"the driver supports CUDA {vstr(drv)} (CUDA {f.nvjitlink[0]} needs driver "
            f"{MIN_DRIVER_BRANCH.get(f.nvjitlink[0], '?')}+): the driver cannot load them",
            f"upgrade the driver to {MIN_DRIVER_BRANCH.get(f.nvjitlink[0], '?')}+, or install the "
            f"CUDA {drv[0]} flavour: pip install 'numba-cuda[cu{drv[0]}]' with its NVVM and "
            "nvJitLink")]
    if why == "ptx-too-new":
        fix = (f"{_pip_nvjitlink(rel)} (nvJitLink compiles the PTX itself; the driver only loads "
               "the cubin)" if rel[0] <= drv[0] else f"pip install 'numba-cuda[cu{drv[0]}]'")
        return [Diagnosis(
            why, sev, f"NVVM {vstr(rel)} writes PTX ISA {vstr(isa)}, but this driver (CUDA "
            f"{vstr(drv)}) reads PTX ISA up to {vstr(max_ptx_isa(drv))} and no usable nvJitLink "
            f"({vstr(NVJITLINK_MIN)}+) bridges it: loading fails with \"PTX was "
            "compiled with an unsupported toolchain\" (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)",
            f"{fix}; or {_pip_nvvm(drv)} (NVVM no newer than the driver); or upgrade the "
            f"driver to one for CUDA {vstr(need)}+")]
    if why == "bridged":
        return [Diagnosis(
            "ptx-bridged", "info", f"NVVM writes PTX ISA {vstr(isa)}, newer than this driver "
            f"reads ({vstr(max_ptx_isa(drv))}); nvJitLink {vstr(f.nvjitlink)} compiles it to "
            "cubins, which the driver loads (minor-version compatibility). PTX handed to the "
            "driver itself (validate) is bridged through nvJitLink the same way")]
    return []


def _in(spec, v):
    lo, hi = spec
    return v is not None and (lo is None or v >= lo) and (hi is None or v < hi)


def _package_rules(f: Facts) -> list:
    out = []
    p = {k: vtuple(v, 3) for k, v in f.packages.items() if v}
    for a, sa, b, sb, what, fix in KNOWN_BAD:
        if _in(sa, p.get(a)) and _in(sb, p.get(b)):
            out.append(Diagnosis("bad-packages", "error", f"{a} {f.packages[a]} with {b} "
                                 f"{f.packages[b]}: {what}", fix))
    nc = p.get("numba-cuda")
    if nc is not None and not ((0, 30, 4) <= nc < (0, 31)):
        out.append(Diagnosis("numba-cuda-version", "warning",
                             f"numba-cuda {f.packages['numba-cuda']}: nbkernels uses numba-cuda "
                             "internals validated on 0.30.4-0.30.x",
                             "pip install 'numba-cuda>=0.30.4,<0.31'"))
    drv = f.driver_cuda
    for pkg in ("cupy", "torch"):
        bv = vtuple(f.packages.get(f"{pkg}-cuda"))
        if drv is not None and bv and bv[0] > drv[0]:
            out.append(Diagnosis(
                f"{pkg}-cuda", "warning", f"{pkg} is built for CUDA {vstr(bv)} but the driver "
                f"supports CUDA {vstr(drv)}: {pkg} itself will fail to start (nbkernels does not "
                f"need it)", f"install the CUDA {drv[0]} build of {pkg}, or upgrade the driver"))
    return out


def whole_program_assembler(isa, ptxas, driver) -> str | None:
    """Who assembles arch-specific (sm_90a) PTX of ISA ``isa`` as a whole program, given the
    ptxas release ``ptxas`` and the driver's CUDA version ``driver`` (None: absent):
    ``"ptxas X.Y"`` when that ptxas reads the PTX, else ``"driver JIT"`` when the driver does,
    else None (only nvJitLink is left, which links a relocatable unit: ptxas then serializes
    wgmma and ignores setmaxnreg; docs/perf-notes.md, s3)."""
    isa = tuple(isa)
    if ptxas and max_ptx_isa(ptxas) >= isa:
        return f"ptxas {vstr(ptxas)}"
    if driver and max_ptx_isa(driver) >= isa:
        return "driver JIT"
    return None


def _hopper_rules(f: Facts) -> list:
    """A Hopper GPU whose sm_90a GEMM only nvJitLink could build (serialized wgmma)."""
    hopper = [g for g in f.gpus if g.cc[0] == 9]
    if not hopper or not f.nvvm_ptx_isa or f.init_error:
        return []
    if whole_program_assembler(f.nvvm_ptx_isa, f.ptxas, f.driver_cuda):
        return []
    rel = f.nvvm_release or cuda_for_ptx_isa(f.nvvm_ptx_isa)
    return [Diagnosis(
        "sm90a-serialized", "warning", f"GPU {hopper[0].index} ({hopper[0].name}) runs the "
        f"sm_90a GEMM, which must be assembled as a whole program: no ptxas reads NVVM's PTX "
        f"ISA {vstr(f.nvvm_ptx_isa)} (ptxas: {vstr(f.ptxas) if f.ptxas else 'none'}) and the "
        f"driver (CUDA {vstr(f.driver_cuda)}) reads up to {vstr(max_ptx_isa(f.driver_cuda))}, "
        "so nvJitLink links it and its wgmma run serialized (about 0.7-0.8x speed; a "
        "SerializedWgmmaWarning says so at run time)",
        f"pip install 'cuda-toolkit[nvcc]=={rel[0]}.{rel[1]}.*' (ptxas of NVVM's release; the "
        "cu13 extra installs it) or set NBKERNELS_PTXAS to such a ptxas")]


def _tool_rules(f: Facts) -> list:
    if f.ptxas is None:
        how = ("nvJitLink assembles instead" if _nvjitlink_usable(f) else
               "it writes PTX only (no cubin, registers or SASS)")
        return [Diagnosis("no-ptxas", "info", f"ptxas not found: `nbkernels compile` {how}",
                          "pip install 'nbkernels[test]' or set NBKERNELS_PTXAS")]
    if f.nvvm_ptx_isa and max_ptx_isa(f.ptxas) < tuple(f.nvvm_ptx_isa):
        return [Diagnosis(
            "ptxas-older-than-nvvm", "warning", f"ptxas {vstr(f.ptxas)} ({f.ptxas_where}) reads "
            f"PTX ISA up to {vstr(max_ptx_isa(f.ptxas))}, NVVM writes {vstr(f.nvvm_ptx_isa)}: "
            "`nbkernels compile` cannot assemble (at run time only sm_90a kernels use ptxas: "
            "see sm90a-serialized)",
            "pip install 'nbkernels[test]' (pins ptxas to NVVM's release) or set NBKERNELS_PTXAS")]
    return []


def diagnose(f: Facts) -> list:
    """Every diagnosis the facts support, errors first."""
    out = _driver_rules(f) + _ptx_rules(f) + _package_rules(f) + _hopper_rules(f) + \
        _tool_rules(f)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda d: order[d.severity])


def failing(diagnoses) -> bool:
    return any(d.severity == "error" for d in diagnoses)


# --- at run time: the driver or the linker refused nbkernels' code ---------------------------
_CODE_RULES = {  # CUresult -> the rule families that explain it
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "ptx",
    "CUDA_ERROR_INVALID_PTX": "ptx",
    "CUDA_ERROR_INVALID_IMAGE": "ptx",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "binary",
    "CUDA_ERROR_JIT_COMPILER_NOT_FOUND": "jit",
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "driver",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "driver",
    "CUDA_ERROR_STUB_LIBRARY": "driver",
}

#: What ``load_module`` bridged through nvJitLink after the driver refused its PTX (for reports).
BRIDGED: dict = {}


def ptx_isa_of_image(image: bytes):
    """``.version`` of PTX text, None for a cubin (ELF) or text without one."""
    if image[:4] == b"\x7fELF":
        return None
    m = re.search(rb"^\s*\.version\s+(\d+)\.(\d+)", image, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def diagnose_load(code: str, image_isa, f: Facts, built_for: str = "") -> Diagnosis | None:
    """The diagnosis for a module load that failed with CUresult ``code``; None: no version
    rule explains it."""
    family = _CODE_RULES.get(code)
    if family == "driver":
        return next((d for d in _driver_rules(Facts(**{**f.__dict__, "init_error": code}))
                     if d.severity == "error"), None)
    if family == "jit":
        return Diagnosis("no-ptx-jit", "error", "the driver's PTX JIT compiler "
                         "(libnvidia-ptxjitcompiler) is missing", "in a container set "
                         "NVIDIA_DRIVER_CAPABILITIES=compute,utility; or install nvJitLink "
                         f"({_pip_nvjitlink(f.nvvm_release or (13, 0))}) so cubins are loaded")
    gpu = f.gpus[0] if f.gpus else None
    if family == "binary" or (code == "CUDA_ERROR_INVALID_IMAGE" and image_isa is None and gpu
                              and not cubin_runs_on(built_for, gpu.cc)):
        return Diagnosis("wrong-arch", "error", f"the code was built for {built_for or '?'} but "
                         f"this GPU is compute capability {vstr(gpu.cc) if gpu else '?'}: a cubin "
                         "runs only on its own arch (PTX of an older arch is JIT-compiled)",
                         "clear $NBKERNELS_CACHE_DIR; if it recurs, report it as a bug")
    if family == "ptx":
        g = Facts(**{**f.__dict__})
        if image_isa is not None:
            g.nvvm_ptx_isa = image_isa
            g.nvjitlink = None  # PTX handed to the driver: its own JIT decides
        found = [d for d in _ptx_rules(g) if d.severity in ("error", "warning")]
        if found:
            found[0].severity = "error"
            return found[0]
    return None


def cubin_runs_on(built_for: str, cc: tuple) -> bool:
    """Whether a cubin for arch ``built_for`` runs on a GPU of compute capability ``cc``: same
    major, same or higher minor; arch-specific (``sm_90a``) on exactly that arch. True when
    ``built_for`` is unknown (nothing to blame)."""
    from .arch import Arch
    from .errors import NbkernelsError

    try:
        a = Arch.parse(built_for)
    except NbkernelsError:
        return True
    if a.suffix:
        return a.base == tuple(cc)
    return a.major == cc[0] and cc[1] >= a.minor


def _live_facts(image_isa=None) -> Facts:
    """Facts for a load failure, with the current device as the only GPU."""
    from numba import cuda

    from . import doctor

    f = doctor.collect(probe_nvvm=image_isa is None, packages=False)
    try:
        dev = cuda.get_current_device()
        f.gpus = [g for g in f.gpus if g.index == dev.id] or f.gpus
    except Exception:
        pass
    return f


def _built_for(key: str) -> str:
    """The arch a cached kernel was built for (launch.build records it beside the image)."""
    import json

    from .launch import cache_dir

    try:
        return json.loads((cache_dir() / f"{key}.json").read_text())["arch"]
    except (OSError, ValueError, KeyError):
        return "?"


def load_module(image: bytes, what: str):
    """``cuModuleLoadData`` of a cubin or NUL-terminated PTX. PTX the driver cannot JIT (newer
    ISA than it reads) is compiled by nvJitLink for this GPU instead; any other refusal the
    version rules explain raises :class:`CompatibilityError` with the diagnosis."""
    from cuda.bindings import driver as drv

    err, module = drv.cuModuleLoadData(image)
    if err == drv.CUresult.CUDA_SUCCESS:
        return module
    isa = ptx_isa_of_image(image)
    if isa is not None and err.name in ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                                        "CUDA_ERROR_INVALID_PTX"):
        cubin = _nvjitlink_for_this_gpu(image)
        if cubin is not None:
            err2, module = drv.cuModuleLoadData(cubin)
            if err2 == drv.CUresult.CUDA_SUCCESS:
                BRIDGED[what] = f"driver refused PTX ISA {vstr(isa)} ({err.name}); nvJitLink " \
                                "compiled it for this GPU"
                return module
    _, msg = drv.cuGetErrorString(err)
    raw = f"{err.name}: {msg.decode() if msg else ''}"
    try:
        diag = diagnose_load(err.name, isa, _live_facts(isa), _built_for(what))
    except Exception:  # the diagnosis must never hide the driver's own message
        diag = None
    raise CompatibilityError(f"loading {what} failed", diag, raw)


def _nvjitlink_for_this_gpu(ptx: bytes):
    """A cubin of ``ptx`` for the current GPU through nvJitLink, or None where none is usable."""
    try:
        from cuda.core import Linker
        from numba import cuda
        from numba.cuda.cudadrv.driver import _Linker

        if "NVJITLINK" not in str(Linker.which_backend()).upper():
            return None
        linker = _Linker(cc=cuda.get_current_device().compute_capability)
        linker.add_ptx(ptx.rstrip(b"\0"))
        linked = linker.complete()
        return bytes(getattr(linked, "code", linked))
    except Exception:
        return None


def raise_link_failure(exc: Exception, ptx: str, arch) -> None:
    """Raise :class:`CompatibilityError` when the version rules explain why linking ``ptx``
    failed; return (the caller re-raises ``exc``) otherwise."""
    try:
        m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
        f = _live_facts()
        if m:
            f.nvvm_ptx_isa = (int(m.group(1)), int(m.group(2)))
        found = [d for d in _ptx_rules(f) if d.severity in ("error", "warning")]
    except Exception:
        return
    if found:
        found[0].severity = "error"
        raise CompatibilityError(f"linking a kernel for {arch} failed", found[0], str(exc)) \
            from exc
