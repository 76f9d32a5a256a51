"""Fused row kernels at the memory-bandwidth limit: rms_norm, layer_norm, softmax, swiglu.

Each operation is one module (``*_kernel.py``): its kernel builder, a float64 NumPy
reference (``*_ref``) and the public function. Shared pieces: :mod:`.device` (register-held
rows, reductions), :mod:`.host` (arrays, checks, launches, repeat calls), :mod:`.config`
(layouts and the per-arch table).
"""
from .config import RowConfig
from .layer_norm_kernel import layer_norm, layer_norm_ref
from .rms_norm_kernel import NormWithResidual, rms_norm, rms_norm_ref
from .softmax_kernel import softmax, softmax_ref
from .swiglu_kernel import swiglu, swiglu_ref

__all__ = ["RowConfig", "NormWithResidual", "rms_norm", "rms_norm_ref", "layer_norm",
           "layer_norm_ref", "softmax", "softmax_ref", "swiglu", "swiglu_ref"]
