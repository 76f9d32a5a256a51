"""nbkernels: tensor-core kernels and typed inline-PTX intrinsics for numba-cuda."""
__version__ = "0.1.0"

from .arch import Arch
from .errors import (
    ArchError,
    IntrinsicUsageError,
    NbkernelsError,
    PtxVersionError,
    SimulatorError,
    ToolchainError,
)
from .compat import CompatibilityError
from . import intrinsics
from .smem import enable_large_shared_memory, max_dynamic_shared_memory
from .matmul import autotune, explain, gemm
from .rows import NormWithResidual, RowConfig, layer_norm, rms_norm, softmax, swiglu

__all__ = [
    "Arch", "ArchError", "IntrinsicUsageError", "NbkernelsError", "PtxVersionError",
    "SimulatorError", "ToolchainError", "intrinsics", "enable_large_shared_memory",
    "max_dynamic_shared_memory", "gemm", "explain", "autotune", "__version__",
    "rms_norm", "layer_norm", "softmax", "swiglu", "RowConfig", "NormWithResidual",
    "CompatibilityError",
]
