"""nbkernels on JAX arrays (DLPack only to nbkernels; session 34): gemm and rms_norm on
jax.numpy arrays on the GPU, the result's type and its error against float64; then out= a
JAX array (refused). ``python tools/jax_probe.py [bf16,f16,f32]``."""
import sys

import jax
import jax.numpy as jnp
import numpy as np

import nbkernels

print("jax", jax.__version__, jax.devices())
rng = np.random.default_rng()
DTYPES = {"bf16": jnp.bfloat16, "f16": jnp.float16, "f32": jnp.float32}
for dt in [DTYPES[d] for d in (sys.argv[1] if len(sys.argv) > 1 else "bf16,f16,f32").split(",")]:
    a = rng.standard_normal((256, 192)).astype(np.float32)
    b = rng.standard_normal((192, 320)).astype(np.float32)
    ja, jb = jnp.asarray(a, dt), jnp.asarray(b, dt)
    ref = np.asarray(ja, np.float64) @ np.asarray(jb, np.float64)
    for call in range(2):
        r = nbkernels.gemm(ja, jb)
        err = np.linalg.norm(np.asarray(r, np.float64) - ref) / np.linalg.norm(ref)
        print(f"gemm {jnp.dtype(dt).name} call {call}: {type(r).__module__}.{type(r).__name__} "
              f"{r.dtype} relerr {err:.2e}")
    x = rng.standard_normal((16, 4096)).astype(np.float32)
    w = (rng.standard_normal(4096) + 1).astype(np.float32)
    jx, jw = jnp.asarray(x, dt), jnp.asarray(w, dt)
    y = nbkernels.rms_norm(jx, jw, eps=1e-6)
    x64, w64 = np.asarray(jx, np.float64), np.asarray(jw, np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * w64
    err = np.abs(np.asarray(y, np.float64) - want).max() / np.abs(want).max()
    print(f"rms_norm {jnp.dtype(dt).name}: {type(y).__name__} {y.dtype} max err {err:.2e}")
try:
    nbkernels.gemm(ja, jb, out=jnp.zeros((256, 320), jnp.float32))
    print("out= a JAX array: accepted")
except Exception as e:
    print(f"out= a JAX array: {type(e).__name__}: {e}")
