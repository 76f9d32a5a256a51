"""Typed errors of nbkernels. Messages follow "what, expected, got"."""


class NbkernelsError(Exception):
    """Base class of every error nbkernels raises on purpose."""


class ArchError(NbkernelsError):
    """An instruction or variant needs a newer GPU architecture than the compile target."""

    def __init__(self, what, needed, target, hint=""):
        self.what = what
        self.needed = needed
        self.target = target
        msg = f"{what} needs {needed} or newer, but this kernel is being compiled for {target}"
        if hint:
            msg += f"; {hint}"
        super().__init__(msg)


class PtxVersionError(NbkernelsError):
    """The NVVM in use emits a PTX ISA version older than an instruction needs."""


class IntrinsicUsageError(NbkernelsError, TypeError):
    """An intrinsic was called with arguments it cannot take, or outside a kernel."""


class SimulatorError(NbkernelsError):
    """A simulated warp-collective or memory operation saw an invalid state."""


class ToolchainError(NbkernelsError):
    """A CUDA tool (ptxas, nvdisasm, NVVM) needed for an operation is missing or failed."""
