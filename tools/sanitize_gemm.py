"""Edge-shape GEMMs of every variant, for compute-sanitizer (memcheck, racecheck).

    compute-sanitizer --tool memcheck python3 tools/sanitize_gemm.py [DTYPE | VARIANT ...]

With dtypes (e.g. ``float64``) or variants (e.g. ``sm80/wide``) named, only their cases run.
"""
import sys

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16

CASES = [  # dtype, M, N, K, layout, variant, precision
    ("bfloat16", 129, 67, 75, "rr", None, None),     # sm80, edges in M, N, K; N-major b
    ("float16", 64, 128, 96, "cc", None, None),      # sm80 interior blocks, M-major a
    ("float16", 33, 17, 45, "ur", None, None),       # misaligned a: ordinary loads
    ("float16", 40, 24, 40, "rr", "sm75", None),     # sm75 variant
    ("float32", 70, 33, 41, "rc", None, "3xtf32"),   # tf32 split
    ("int8", 65, 40, 70, "rr", None, None),          # int8 (padded copies)
    ("float64", 37, 29, 31, "rc", None, None),       # simt
    ("float32", 50, 1, 7, "rr", None, "fp32"),       # simt, N = 1
    ("bfloat16", 16, 72, 2000, "rc", None, None),    # split-K + reduction
    # config.WIDE_K (Hopper's sm80-class default for large 16-bit problems), forced: edges in
    # M, N, K, then interior blocks with more k-tiles than its 3 stages
    ("bfloat16", 129, 67, 75, "rr", "sm80/wide", None),
    ("float16", 256, 128, 320, "cc", "sm80/wide", None),
]
if cupy.cuda.Device().compute_capability == "90":  # Hopper-only variants
    CASES += [
        ("bfloat16", 70, 136, 72, "rr", "sm90a", None),   # TMA zero fill at M, N, K edges
        ("float16", 136, 264, 520, "cc", "sm90a", None),  # M-major a, more k-tiles than stages
        # the staged epilogue (the default since session 7) in every consumer layout: one 64-row
        # block per consumer, two (w), ping-pong, and a cluster pair; rows past M staged, not stored
        ("bfloat16", 300, 520, 264, "rr", "sm90a/128x256x4", None),
        ("float16", 264, 256, 136, "rc", "sm90a/256x128x4w", None),
        ("bfloat16", 200, 392, 200, "cr", "sm90a/128x128x6p", None),
        ("bfloat16", 300, 264, 520, "rr", "sm90a/128x256x4c2", None),
        ("float64", 37, 29, 31, "rc", "dmma", None),      # f64 tensor cores, edges
        ("float64", 130, 70, 300, "cr", "dmma", None),
        # K-major a (k-groups of 16, the refill after the first piece): 19 k-tiles through
        # the 4-stage ring, edges in M and N
        ("float64", 130, 70, 300, "rr", "dmma", None),
        # M-major a on the 128x64 tile (two chunk columns a thread, whole-stage k-groups):
        # with a K-major b, and with an odd M (predicated 8-byte loads)
        ("float64", 136, 66, 200, "cc", "dmma", None),
        ("float64", 131, 70, 45, "cr", "dmma", None),
    ]

if sys.argv[1:]:  # dtypes or variants
    CASES = [c for c in CASES if c[0] in sys.argv[1:] or c[5] in sys.argv[1:]]
rng = np.random.default_rng()
worst = 0.0
for dtype, m, n, k, lay, variant, prec in CASES:
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    a = rng.standard_normal((m, k)).astype(dt) if dtype != "int8" else \
        rng.integers(-9, 9, (m, k)).astype(np.int8)
    b = rng.standard_normal((k, n)).astype(dt) if dtype != "int8" else \
        rng.integers(-9, 9, (k, n)).astype(np.int8)
    da = cupy.asarray(np.asfortranarray(a) if lay[0] == "c" else a)
    if lay[0] == "u":
        buf = cupy.zeros(m * k + 1, dt)
        buf[1:] = cupy.asarray(a).ravel()
        da = buf[1:].reshape(m, k)
    db = cupy.asarray(np.asfortranarray(b) if lay[1] == "c" else b)
    tile = None
    if variant == "sm80/wide":
        from nbkernels.matmul import config

        variant, tile = "sm80", config.WIDE_K
    elif variant and "/" in variant:  # variant/tile
        from nbkernels.matmul.bench_hopper import parse_config

        variant, tile = variant.split("/")[0], parse_config(variant.split("/")[1])
    d = nbkernels.gemm(da, db, variant=variant, precision=prec, tile=tile)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.linalg.norm(cupy.asnumpy(d).astype(np.float64) - ref) / np.linalg.norm(ref))
    worst = max(worst, err)
    print(f"{dtype:9s} {m}x{n}x{k} {lay} {variant or 'auto':5s} {tile or ''} relerr {err:.1e}",
          flush=True)
cupy.cuda.Device().synchronize()
print(f"sanitize cases done, worst relative error {worst:.1e}")
sys.exit(0 if worst < 1e-2 else 1)
