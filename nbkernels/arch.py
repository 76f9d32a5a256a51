"""Compute-capability handling: parsing arch names and finding the arch being compiled for.

An :class:`Arch` is ``(major, minor, suffix)``; the suffix is ``"a"`` for the
arch-specific feature sets (``sm_90a``) and empty otherwise. numba-cuda records
the compile target in its config stack while it types and lowers a kernel, for
``cuda.jit`` dispatchers and ``compile_ptx(..., cc=...)`` alike; intrinsics read
it at lowering time, which is the only time that is re-run for every target.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import NbkernelsError

#: Architectures nbkernels builds and tests for. Older GPUs have no tensor-core path we ship.
SUPPORTED_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
MIN_ARCH = (7, 5)

_ARCH_RE = re.compile(r"^(?:sm_|compute_)?(\d+)(\d)([af]?)$")


@dataclass(frozen=True, order=True)
class Arch:
    major: int
    minor: int
    suffix: str = ""

    @classmethod
    def parse(cls, value) -> "Arch":
        """Accept ``"sm_80"``, ``"80"``, ``"sm_90a"``, ``(8, 0)``, ``(9, 0, "a")`` or an Arch."""
        if isinstance(value, Arch):
            return value
        if isinstance(value, tuple) and len(value) in (2, 3):
            suffix = value[2] if len(value) == 3 else ""
            return cls(int(value[0]), int(value[1]), suffix or "")
        if isinstance(value, str):
            m = _ARCH_RE.match(value.strip().lower())
            if m:
                return cls(int(m.group(1)), int(m.group(2)), m.group(3))
        raise NbkernelsError(
            f"arch: expected a name like 'sm_80' or 'sm_90a' or a tuple like (8, 0), got {value!r}"
        )

    @property
    def cc(self) -> tuple:
        """The tuple numba-cuda's ``compile_ptx(cc=...)`` takes."""
        return (self.major, self.minor, self.suffix) if self.suffix else (self.major, self.minor)

    @property
    def base(self) -> tuple:
        return (self.major, self.minor)

    def satisfies(self, need: "Arch") -> bool:
        """True when code for ``self`` may use an instruction that needs ``need``.

        Arch-specific features (suffix ``a``) exist only on that exact major/minor.
        """
        if need.suffix == "a":
            return self.suffix == "a" and self.base == need.base
        return self.base >= need.base

    def __str__(self) -> str:
        return f"sm_{self.major}{self.minor}{self.suffix}"


@dataclass(frozen=True)
class ArchLimits:
    """What one SM of an arch holds (CUDA C++ Programming Guide, "Technical Specifications per
    Compute Capability"): for plans made for an arch other than the GPU's (``validate --as``,
    the AOT build's default tiles)."""

    block_smem: int  # largest opt-in shared memory per block, bytes
    sm_smem: int  # shared memory per SM at the largest carveout, bytes
    threads: int  # resident threads per SM
    blocks: int  # resident blocks per SM
    registers: int = 65536  # 32-bit registers per SM
    reserved_smem: int = 1024  # per block, taken by the system (0 before sm_80)


_KB = 1024
LIMITS = {
    (7, 5): ArchLimits(64 * _KB, 64 * _KB, 1024, 16, reserved_smem=0),
    (8, 0): ArchLimits(163 * _KB, 164 * _KB, 2048, 32),
    (8, 6): ArchLimits(99 * _KB, 100 * _KB, 1536, 16),
    (8, 7): ArchLimits(163 * _KB, 164 * _KB, 2048, 16),
    (8, 9): ArchLimits(99 * _KB, 100 * _KB, 1536, 24),
    (9, 0): ArchLimits(227 * _KB, 228 * _KB, 2048, 32),
    (10, 0): ArchLimits(227 * _KB, 228 * _KB, 2048, 32),
}


def limits(arch: "Arch") -> ArchLimits:
    """The per-SM limits of ``arch`` (an NbkernelsError for an arch the table lacks)."""
    lim = LIMITS.get(Arch.parse(arch).base)
    if lim is None:
        raise NbkernelsError(f"arch limits: expected one of "
                             f"{', '.join(str(Arch(*k)) for k in LIMITS)}, got {arch}")
    return lim


def compile_target() -> Arch | None:
    """The arch numba-cuda is compiling for right now, or None outside a compilation."""
    from numba.cuda.core import targetconfig

    flags = targetconfig.ConfigStack().top_or_none()
    cc = getattr(flags, "compute_capability", None) if flags is not None else None
    if not cc:
        return None
    return Arch.parse(tuple(cc))


#: Lists that note the arch of each :func:`target_satisfies` question (see ``reading_targets``).
_TARGET_READERS: list = []


def target_satisfies(need: "Arch") -> bool:
    """Whether the arch being compiled for offers ``need`` (False outside a compilation, as in
    numba's simulator): for lowering that emits different code per arch, as ``#if
    __CUDA_ARCH__ >= 900`` does in CUDA C++. Each question is noted, so that ``nbkernels
    compile``, which lets archs share the code numba lowered for one of them, shares it only
    between archs that answer every question alike. (The intrinsics' arch checks read
    :func:`compile_target`: they refuse, never pick.)"""
    for reads in _TARGET_READERS:
        reads.append(need)
    target = compile_target()
    return target is not None and target.satisfies(need)


class reading_targets:
    """``with reading_targets() as needs:``: ``needs`` lists the archs that
    :func:`target_satisfies` was asked about inside the block (in this process, any thread)."""

    def __enter__(self) -> list:
        self.needs = []
        _TARGET_READERS.append(self.needs)
        return self.needs

    def __exit__(self, *exc):
        _TARGET_READERS.remove(self.needs)
        return False


def device_arch(device=None) -> Arch | None:
    """The arch of the current (or given) CUDA device, None when there is no GPU."""
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
        dev = device or cuda.get_current_device()
        major, minor = dev.compute_capability
    except Exception:
        return None
    return Arch(major, minor, "a" if (major, minor) == (9, 0) else "")
