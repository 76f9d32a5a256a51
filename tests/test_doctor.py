"""nbkernels doctor: the diagnosis for invented version sets, the version tables, the load-error
translation, and the command itself (here, and on a GPU where there is one)."""
import json
import os
import subprocess
import sys

import pytest

from nbkernels import compat, doctor
from nbkernels.compat import Facts, Gpu

from .conftest import GPU_CC
from .simrun import ROOT

H200 = [Gpu(0, "NVIDIA H200", (9, 0))]


def facts(driver=(13, 0), nvvm=(13, 0), nvjitlink="same", ptxas="same", gpus=H200, **kw):
    """A consistent fact set: NVVM release ``nvvm`` writing its table ISA, nvJitLink and
    ptxas of the same release unless given (None: absent)."""
    nvjitlink = nvvm if nvjitlink == "same" else nvjitlink
    ptxas = nvvm if ptxas == "same" else ptxas
    base = dict(driver_cuda=driver, gpus=list(gpus) if driver else [], nvvm_release=nvvm,
                nvvm_ptx_isa=compat.PTX_ISA_OF_CUDA[nvvm] if nvvm else None, nvjitlink=nvjitlink,
                ptxas=ptxas, user_driver="580.159.04", kernel_driver="580.159.04",
                packages={"numpy": "2.4.6", "numba-cuda": "0.30.4"})
    base.update(kw)
    return Facts(**base)


# (name, facts, codes that must appear, exit fails?, text the first error/finding must hold)
TABLE = [
    ("H200 as on the device machine", facts(), set(), False, None),
    ("NVVM 13.4 on a 13.0 driver, nvJitLink 13.4 bridges", facts(nvvm=(13, 4)),
     {"ptx-bridged"}, False, "nvJitLink 13.4 compiles it"),
    ("NVVM 13.4 on a 13.0 driver, no nvJitLink", facts(nvvm=(13, 4), nvjitlink=None),
     {"ptx-too-new"}, True, "nvidia-nvjitlink==13.4"),
    ("NVVM 13.4 on a 12.8 driver, no nvJitLink", facts(driver=(12, 8), nvvm=(13, 4),
                                                       nvjitlink=None),
     {"ptx-too-new"}, True, "numba-cuda[cu12]"),
    ("nvJitLink 13.4 cubins on a 12.8 driver", facts(driver=(12, 8), nvvm=(13, 4)),
     {"nvjitlink-newer-major"}, True, "driver 580+"),
    ("nvJitLink 13.0 older than NVVM 13.4", facts(nvvm=(13, 4), nvjitlink=(13, 0)),
     {"nvjitlink-older-than-nvvm"}, True, "nvidia-nvjitlink==13.4"),
    ("nvJitLink 12.2: cuda.core links with the driver, which reads 8.2 < 8.4",
     facts(driver=(12, 2), nvvm=(12, 4), nvjitlink=(12, 2)), {"ptx-too-new"}, True, "8.4"),
    ("NVVM 12.6 writes 8.5, which a 12.5 driver reads", facts(driver=(12, 5), nvvm=(12, 6),
                                                             nvjitlink=None), set(), False, None),
    ("forward-compat libcuda on a GeForce: error 804",
     facts(gpus=[], user_driver="590.48.01",
           init_error="CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
     {"forward-compat-unsupported"}, True, "590.48.01"),
    ("forward-compat libcuda on a data-center GPU", facts(user_driver="590.48.01"),
     {"forward-compat"}, False, None),
    ("user-mode and kernel-mode drivers differ: 803",
     facts(gpus=[], init_error="CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"), {"driver-mismatch"}, True,
     "error 803"),
    ("the toolkit's libcuda stub", facts(gpus=[], init_error="CUDA_ERROR_STUB_LIBRARY"),
     {"stub-driver"}, True, "stubs"),
    ("no driver at all", facts(driver=None, user_driver=None, kernel_driver=None),
     {"no-gpu"}, False, None),
    ("a driver but no GPU", facts(gpus=[], init_error="CUDA_ERROR_NO_DEVICE"), {"no-gpu"},
     False, None),
    ("a Volta GPU", facts(gpus=[Gpu(0, "Tesla V100", (7, 0))]), {"gpu-too-old"}, True, "7.5"),
    ("numpy 2.5 with numba-cuda 0.30.4",
     facts(packages={"numpy": "2.5.0", "numba-cuda": "0.30.4"}), {"bad-packages"}, True,
     "numpy<2.5"),
    ("NVVM not loadable", facts(nvvm_error="NvvmSupportError: libNVVM cannot be found",
                                nvvm_ptx_isa=None), {"nvvm-missing"}, True, "numba-cuda[cu13]"),
    ("no GPU: an old nvJitLink is only a warning", facts(driver=None, nvvm=(13, 4),
                                                         nvjitlink=(13, 0)),
     {"no-gpu", "nvjitlink-older-than-nvvm"}, False, None),
    ("ptxas 13.0 older than NVVM 13.4 on an H200 with driver 13.0: sm90a linked by nvJitLink",
     facts(nvvm=(13, 4), ptxas=(13, 0)),
     {"sm90a-serialized", "ptxas-older-than-nvvm", "ptx-bridged"}, False,
     "cuda-toolkit[nvcc]==13.4"),
    ("H200, NVVM 13.4 without ptxas on a 13.4 driver: the driver JIT assembles", facts(
        driver=(13, 4), nvvm=(13, 4), ptxas=None), {"no-ptxas"}, False, None),
    ("torch built for CUDA 13.0 on a 12.8 driver", facts(
        driver=(12, 8), nvvm=(12, 8), packages={"torch": "2.9.0+cu130", "torch-cuda": "13.0"}),
     {"torch-cuda"}, False, None),
]


def test_serialized_sm90a_is_only_diagnosed_on_hopper():
    a100 = [Gpu(0, "NVIDIA A100-SXM4-80GB", (8, 0))]
    for f, want in ((facts(nvvm=(13, 4), ptxas=None), True),
                    (facts(nvvm=(13, 4), ptxas=None, gpus=a100), False),
                    (facts(nvvm=(13, 4), ptxas=(13, 4)), False)):
        assert ("sm90a-serialized" in {d.code for d in compat.diagnose(f)}) == want, f


@pytest.mark.parametrize("name,f,codes,fails,text", TABLE, ids=[t[0] for t in TABLE])
def test_diagnosis_of_version_set(name, f, codes, fails, text):
    found = compat.diagnose(f)
    got = {d.code for d in found}
    assert codes <= got, f"{name}: expected {codes}, got {got}: {[str(d) for d in found]}"
    assert compat.failing(found) == fails, f"{name}: {[(d.severity, d.code) for d in found]}"
    if not codes:
        assert not [d for d in found if d.severity != "info"], [str(d) for d in found]
    if text:
        first = next(d for d in found if d.code in codes)
        assert text in first.what + first.remedy, str(first)
    for d in found:  # every error says what to do about it
        assert d.severity != "error" or d.remedy, d


def test_ptx_isa_table_agrees_with_cuda_bindings():
    utils = pytest.importorskip("cuda.bindings.utils")
    checked = 0
    for isa in sorted(set(compat.PTX_ISA_OF_CUDA.values())):
        try:
            want = utils.get_minimal_required_cuda_ver_from_ptx_ver(f"{isa[0]}.{isa[1]}")
        except ValueError:  # an ISA newer than this cuda-bindings knows
            continue
        got = compat.cuda_for_ptx_isa(isa)
        assert got[0] * 1000 + got[1] * 10 == want, (isa, got, want)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("cuda,isa", [((12, 5), (8, 5)), ((12, 6), (8, 5)), ((12, 7), (8, 6)),
                                      ((13, 0), (9, 0)), ((13, 4), (9, 4)), ((13, 9), (9, 9)),
                                      ((11, 8), (7, 8))])
def test_newest_ptx_isa_a_release_reads(cuda, isa):
    assert compat.max_ptx_isa(cuda) == isa


def test_load_errors_are_translated():
    f = facts(nvvm=(13, 4), nvjitlink=None)
    d = compat.diagnose_load("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", (9, 4), f)
    assert d.code == "ptx-too-new" and d.severity == "error" and "9.4" in d.what
    # PTX handed to the driver: nvJitLink's presence does not make the driver read it
    d = compat.diagnose_load("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", (9, 4), facts(nvvm=(13, 4)))
    assert d.code == "ptx-too-new"
    d = compat.diagnose_load("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", None, facts())
    assert d.code == "forward-compat-unsupported"
    d = compat.diagnose_load("CUDA_ERROR_NO_BINARY_FOR_GPU", None, facts(), "sm_80")
    assert d.code == "wrong-arch" and "sm_80" in d.what and "9.0" in d.what
    assert compat.diagnose_load("CUDA_ERROR_OUT_OF_MEMORY", None, facts()) is None
    err = compat.CompatibilityError("loading k failed", d, "CUDA_ERROR_NO_BINARY_FOR_GPU: x")
    assert isinstance(err, compat.ToolchainError) and "remedy" in str(err) and "x" in str(err)


def test_image_kinds():
    assert compat.ptx_isa_of_image(b"//\n.version 9.0\n.target sm_80\n\0") == (9, 0)
    assert compat.ptx_isa_of_image(b"\x7fELF\x02\x01.version 9.0") is None


def test_kernel_driver_and_libcuda_versions_parse(tmp_path):
    text = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
            "(dvs-builder@U22)  Thu Oct  2 2025\nGCC version:  gcc version 12.3.0\n")
    assert doctor.parse_kernel_driver(text) == "580.159.04"
    assert doctor.parse_kernel_driver("580.65.06\n") == "580.65.06"
    assert doctor.user_driver_of("/usr/lib/x86_64-linux-gnu/libcuda.so.590.48.01") == "590.48.01"
    assert doctor.user_driver_of("/usr/lib/libcuda.so.1") is None


def _doctor(*args):
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run([sys.executable, "-m", "nbkernels", "doctor", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)


def test_doctor_command_json_agrees_with_exit_status():
    proc = _doctor("--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == (0 if data["ok"] else 1), proc.stderr[-2000:]
    assert data["facts"]["nvvm_ptx_isa"], data["facts"]
    assert {r[0] for r in data["dispatch"]} >= {"gemm"}
    codes = {d["code"] for d in data["diagnoses"]}
    if GPU_CC is None:
        assert "no-gpu" in codes and data["ok"], data["diagnoses"]
    else:
        assert data["facts"]["gpus"] and data["facts"]["driver_cuda"]


def test_doctor_command_text():
    proc = _doctor()
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    for section in ("GPUs", "Driver", "NVVM", "nvJitLink", "PTX loading", "Packages",
                    "Dispatch on", "Diagnosis"):
        assert section in proc.stdout, proc.stdout


@pytest.mark.gpu
def test_doctor_on_this_gpu_reports_it_and_its_variant():
    proc = _doctor("--json")
    data = json.loads(proc.stdout)
    major, minor = GPU_CC
    assert [major, minor] in [g["cc"] for g in data["facts"]["gpus"]]
    variants = {(r[0], r[1]): r[2] for r in data["dispatch"]}
    # Turing: mma.m16n8k8; Hopper sm_90: wgmma (issue #4); Ampere, Ada, Blackwell: sm80-class
    want = {7: "sm75", 9: "sm90a" if minor == 0 else "sm80"}.get(major, "sm80")
    assert variants[("gemm", "float16")] == want
    assert variants[("rms_norm", "bfloat16")] == "rows/rms_norm"
    assert data["ok"], data["diagnoses"]  # the device machine's stack is expected to be sound


def test_cubin_compatibility_rule():
    assert compat.cubin_runs_on("sm_80", (8, 6)) and compat.cubin_runs_on("sm_80", (8, 0))
    assert not compat.cubin_runs_on("sm_86", (8, 0)) and not compat.cubin_runs_on("sm_80", (9, 0))
    assert compat.cubin_runs_on("sm_90a", (9, 0)) and not compat.cubin_runs_on("sm_90a", (10, 0))
    assert compat.cubin_runs_on("?", (9, 0))
    d = compat.diagnose_load("CUDA_ERROR_INVALID_IMAGE", None, facts(), "sm_75")
    assert d.code == "wrong-arch" and "sm_75" in d.what
