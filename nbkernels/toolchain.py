"""Offline build tools: PTX for any arch without a GPU, assembled by ptxas, read back as SASS.

ptxas must be at least as new as the NVVM that wrote the PTX (NVVM 13.4 writes PTX ISA
9.4, which ptxas 13.0 rejects). The ``nbkernels[test]`` extra pins the CUDA toolkit
wheels together, so the ptxas found first is the one from ``nvidia-cuda-nvcc`` beside
the NVVM numba-cuda uses; ``NBKERNELS_PTXAS`` overrides the search.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .arch import Arch
from .errors import ToolchainError


def _wheel_bin_dirs():
    """bin/ folders of the NVIDIA toolkit wheels installed in this environment."""
    dirs = []
    for entry in sys.path:
        for sub in ("nvidia/cu13/bin", "nvidia/cuda_nvcc/bin", "nvidia/cu12/bin"):
            p = Path(entry) / sub
            if p.is_dir():
                dirs.append(p)
    return dirs


def find_tool(name: str) -> Path | None:
    """Path of a CUDA tool: $NBKERNELS_<NAME>, the toolkit wheels, $CUDA_HOME/bin, then PATH."""
    env = os.environ.get(f"NBKERNELS_{name.upper()}")
    if env:
        return Path(env)
    for d in _wheel_bin_dirs():
        if (d / name).is_file():
            return d / name
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / name).is_file():
            return Path(root) / "bin" / name
    found = shutil.which(name)
    return Path(found) if found else None


def tool_version(path: Path) -> str:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unusable ({e})"
    m = re.search(r"release (\d+\.\d+)", out.stdout)
    return m.group(1) if m else out.stdout.strip().splitlines()[-1:] and "unknown"


def ptx_isa_of(ptx: str) -> tuple:
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@dataclass
class Assembled:
    arch: Arch
    cubin: bytes
    registers: int
    shared_bytes: int
    spill_stores: int
    spill_loads: int
    stack_bytes: int
    log: str
    barriers: int = 0  # named barriers a block takes (ptxas -v: "used N barriers")


_RES = {
    "registers": re.compile(r"Used (\d+) registers"),
    "shared": re.compile(r"(\d+) bytes smem"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_st": re.compile(r"(\d+) bytes spill stores"),
    "spill_ld": re.compile(r"(\d+) bytes spill loads"),
    "barriers": re.compile(r"used (\d+) barriers"),
}


def _first_int(key, text):
    m = _RES[key].search(text)
    return int(m.group(1)) if m else 0


def assemble(ptx: str, arch, ptxas: Path | None = None) -> Assembled:
    """Assemble ``ptx`` for ``arch`` with ptxas; raise :class:`ToolchainError` on failure."""
    arch = Arch.parse(arch)
    ptxas = ptxas or find_tool("ptxas")
    if ptxas is None:
        raise ToolchainError(
            "ptxas: not found; install the pinned toolkit wheels (pip install 'nbkernels[test]') "
            "or set NBKERNELS_PTXAS"
        )
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        proc = subprocess.run(
            [str(ptxas), f"-arch={arch}", "-v", "-o", str(dst), str(src)],
            capture_output=True, text=True, timeout=600,
        )
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise ToolchainError(f"ptxas ({ptxas}) failed for {arch}:\n{log.strip()}")
        cubin = dst.read_bytes()
    return Assembled(
        arch, cubin, _first_int("registers", log), _first_int("shared", log),
        _first_int("spill_st", log), _first_int("spill_ld", log), _first_int("stack", log), log,
        _first_int("barriers", log),
    )


def disassemble(cubin: bytes) -> str:
    """SASS text of a cubin (nvdisasm, else cuobjdump -sass)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        for tool, args in (("nvdisasm", []), ("cuobjdump", ["-sass"])):
            exe = find_tool(tool)
            if exe is None:
                continue
            proc = subprocess.run([str(exe), *args, str(path)], capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode == 0:
                return proc.stdout
        raise ToolchainError("nvdisasm / cuobjdump: not found or failed; cannot read SASS")


_OPCODE = re.compile(r"^\s*(?:/\*[0-9a-f]+\*/)?\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", re.M)


def sass_opcodes(sass: str) -> list[str]:
    """Opcodes (with modifiers, e.g. ``HMMA.16816.F32.BF16``) in SASS text, in order."""
    ops = []
    for line in sass.splitlines():
        line = line.strip()
        if not line.startswith("/*") or "*/" not in line:
            continue
        body = line.split("*/", 1)[1].strip()
        body = re.sub(r"^@!?U?P[T0-9]+\s+", "", body)
        m = re.match(r"([A-Z][A-Z0-9_.]+)", body)
        if m:
            ops.append(m.group(1))
    return ops


_LABEL = re.compile(r"^\s*(\.L\w+):")
_BRANCH = re.compile(r"\bBRA\b[^`]*`\((\.L\w+)\)")


def local_accesses_in_loops(sass: str) -> int:
    """Local-memory instructions (LDL, STL: spill traffic) inside a loop of the SASS: between a
    label and a later branch back to it. Spills outside every loop (a kernel's set-up, its
    epilogue) run once per thread; inside one they run every iteration."""
    body, labels = [], {}
    for line in sass.splitlines():
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(body)
            continue
        s = line.strip()
        if s.startswith("/*") and "*/" in s:
            body.append(s.split("*/", 1)[1])
    inside = set()
    for i, text in enumerate(body):
        m = _BRANCH.search(text)
        if m and labels.get(m.group(1), len(body)) <= i:
            inside.update(range(labels[m.group(1)], i + 1))
    return sum(1 for i in inside if re.search(r"\b(LDL|STL)\b", body[i]))


def compile_ptx_for(func, signature, arch, launch_bounds=None) -> str:
    """PTX of a kernel for ``arch`` without a GPU (numba-cuda's compile_ptx with cc), as
    nbkernels assembles it (:func:`nbkernels.launch.entry_ptx`)."""
    from numba import cuda

    arch = Arch.parse(arch)
    pyfunc = getattr(func, "py_func", func)
    from .inlining import lean_inlining
    from .launch import entry_ptx

    with lean_inlining():
        ptx, _ = cuda.compile_ptx(pyfunc, signature, cc=arch.cc, launch_bounds=launch_bounds)
    return entry_ptx(ptx, pyfunc, signature)
