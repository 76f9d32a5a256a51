"""GPU check of sm90a tiles (by default those with several k-tiles of wgmma in flight,
WgmmaConfig.depth; else the bench names given, ``128x128x6p 128x256x3``): float64 references, fresh random inputs, NaN-poisoned outputs, shapes with K shorter than the
depth, longer than the ring, tiles cut at M and N, both operand majors, batches, beta * C and
a repeat call. ``python3 tools/tile_check.py [NAME ...]`` on a cc 9.0 GPU; one line per tile."""
import sys

import cupy
import numpy as np

sys.path.insert(0, "tests")
from gemm_cases import TOLERANCES, make, reference, relerr  # noqa: E402

import nbkernels  # noqa: E402
from nbkernels.matmul.wgmma_config import WgmmaConfig  # noqa: E402

TILES = [WgmmaConfig(128, 128, 6, 8, True, depth=2), WgmmaConfig(128, 128, 6, 8, True, depth=3),
         WgmmaConfig(64, 256, 5, 8, True, depth=2), WgmmaConfig(128, 256, 4, depth=2)]
# (dtype, batch, M, N, K, layouts, with C)
SHAPES = [("bfloat16", 0, 1000, 1032, 40, "rr", False), ("float16", 0, 777, 520, 1000, "rc", True),
          ("bfloat16", 2, 300, 264, 2056, "cr", False), ("bfloat16", 0, 2049, 2056, 1024, "rr", False),
          ("float16", 0, 64, 8, 4096, "cc", False), ("bfloat16", 3, 129, 136, 72, "tr", True)]


def main(names):
    from nbkernels.matmul.bench_hopper import parse_config

    rng = np.random.default_rng()
    bad = 0
    for cfg in [parse_config(n) for n in names] or TILES:
        worst = 0.0
        for dtype, batch, m, n, k, lay, with_c in SHAPES:
            sa, sb = ((batch, m, k), (batch, k, n)) if batch else ((m, k), (k, n))
            a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
            shape = sa[:-2] + (m, n)
            c = make(rng, dtype, shape) if with_c else None
            alpha, beta = (0.75, 0.5) if with_c else (1.0, 0.0)
            da, db = cupy.asarray(a), cupy.asarray(b)
            dc = None if c is None else cupy.asarray(c)
            for rep in range(2):  # the second call replays the recorded launch
                out = cupy.asarray(np.full(shape, np.nan, np.float32).astype(a.dtype))
                nbkernels.gemm(da, db, dc, alpha=alpha, beta=beta, out=out, variant="sm90a",
                               tile=cfg)
                err, where = relerr(cupy.asnumpy(out), reference(a, b, c, alpha, beta))
                worst = max(worst, err)
                if not err <= TOLERANCES[(dtype, None)]:
                    bad += 1
                    print(f"FAIL {cfg.key} {dtype} {shape} k={k} {lay} c={with_c} rep={rep}: "
                          f"{err:.3g} at {where}")
        print(f"{cfg.key}: {len(SHAPES) * 2} calls, worst relative error {worst:.2e}")
    print("tile check:", "FAILED" if bad else "all passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
