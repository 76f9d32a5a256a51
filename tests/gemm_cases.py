"""Shared pieces of the GEMM tests: references, tolerances, input makers, layouts."""
import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"float16": np.dtype(np.float16), "bfloat16": BF16, "float32": np.dtype(np.float32),
          "float64": np.dtype(np.float64), "int8": np.dtype(np.int8)}
# Relative tolerance on ||out - ref|| / ||ref||, per (dtype, precision); f16/bf16 include the
# rounding of the result to 16 bits, tf32 the 10-bit operand mantissas.
TOLERANCES = {("float16", None): 2e-3, ("bfloat16", None): 1e-2, ("float32", "tf32"): 5e-3,
              ("float32", "3xtf32"): 1e-5, ("float32", "fp32"): 1e-5, ("float32", None): 1e-5,
              ("float64", None): 1e-12, ("int8", None): 0.0}


def make(rng, dtype, shape, layout="r"):
    """Random operand; ``layout`` "r" row-major, "c" column-major, "s" strided (every other
    column of a wider buffer), "t" a transposed view."""
    dt = DTYPES[dtype]
    if dtype == "int8":
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = (rng.standard_normal(shape) * rng.choice([0.5, 1.0, 4.0])).astype(dt)
    if layout == "c":
        x = np.asfortranarray(x) if x.ndim == 2 else np.ascontiguousarray(
            x.swapaxes(-1, -2)).swapaxes(-1, -2)
    elif layout == "s":
        wide = np.zeros(shape[:-1] + (2 * shape[-1],), dt)
        wide[..., ::2] = x
        x = wide[..., ::2]
    elif layout == "t":
        x = np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)
    return x


def reference(a, b, c=None, alpha=1.0, beta=0.0, precision=None):
    def f64(x):
        x = x.astype(np.float64)
        return x
    A, B = f64(a), f64(b)
    if precision == "tf32":
        def tf32(x):
            u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
            return (((u + 0x1000) & 0xFFFFE000).astype(np.uint32)).view(np.float32).astype(np.float64)
        A, B = tf32(a), tf32(b)
    r = alpha * np.matmul(A, B)
    if c is not None:
        r = r + beta * f64(c)
    return r


def relerr(got, want):
    g = np.asarray(got).astype(np.float64)
    if np.isnan(g).any():
        idx = tuple(int(i) for i in np.argwhere(np.isnan(g))[0])
        return float("inf"), f"NaN (unwritten or poisoned) at {idx}"
    num = np.linalg.norm((g - want).ravel())
    den = max(np.linalg.norm(want.ravel()), 1e-30)
    worst = np.unravel_index(np.argmax(np.abs(g - want)), want.shape) if want.size else ()
    where = (f"worst at {tuple(int(i) for i in worst)}: expected {want[worst]!r}, got {g[worst]!r}"
             if want.size else "")
    return num / den, where


def device_like(x):
    """A CuPy array holding NumPy array ``x`` with the same element strides (and offset into
    its base buffer), so that column-major, strided and transposed layouts reach the GPU as
    they are."""
    import cupy

    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    dbase = cupy.asarray(base)
    off = x.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return cupy.ndarray(x.shape, x.dtype, dbase.data + off, x.strides)
