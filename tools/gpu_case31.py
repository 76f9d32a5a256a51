"""Seed 31 of the sm90a GPU sweep (256x128x4w, bf16 16x192x264, a transposed, b column-major,
no C) alone, staged and guarded epilogue, each in its own process with a timeout: run 2 of
session 6 stopped there for 400 s."""
import subprocess
import sys

CODE = r'''
import sys, numpy as np, cupy, nbkernels
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, device_like, DTYPES, TOLERANCES
from nbkernels.matmul import wgmma_config as wc
staged = sys.argv[1] == "1"
m, n, k = (int(v) for v in sys.argv[2].split("x"))
cfg = wc.WgmmaConfig(256, 128, 4, 8, False, 128, staged=staged)
rng = np.random.default_rng()
a, b = make(rng, "bfloat16", (m, k), "t"), make(rng, "bfloat16", (k, n), "c")
out = cupy.asarray(np.full((m, n), np.nan, np.float32).astype(DTYPES["bfloat16"]))
nbkernels.gemm(device_like(a), device_like(b), out=out, alpha=0.75, variant="sm90a", tile=cfg)
cupy.cuda.Device().synchronize()
err, where = relerr(cupy.asnumpy(out), reference(a, b, None, 0.75, 0.0))
print("staged" if staged else "guarded", sys.argv[2], "relerr", err, "ok" if err <= TOLERANCES[("bfloat16", None)] else "BAD", where)
'''
for staged, shape in (("1", "16x192x264"), ("0", "16x192x264"), ("1", "300x256x264")):
    try:
        r = subprocess.run([sys.executable, "-c", CODE, staged, shape], capture_output=True,
                           text=True, timeout=75)
        print((r.stdout + r.stderr).strip().splitlines()[-1] if (r.stdout + r.stderr).strip() else r.returncode, flush=True)
    except subprocess.TimeoutExpired:
        print("staged" if staged == "1" else "guarded", shape, "TIMED OUT (75 s)", flush=True)
