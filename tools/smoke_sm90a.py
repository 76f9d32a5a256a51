"""A short GPU check of the sm90a GEMM (for a device call with little time left): float16
on CuPy, batched and not, alpha 1 and 0.5, edge tiles, several tiles a block (rows of 16
bytes: TMA), outputs poisoned, against a float64 reference. Each case is called twice on fresh
operands, the second time with another alpha: where the repeat path takes the call (the first
call's launch replayed with its per-call fields rewritten, matmul/fast.py), the second checks
those fields. Prints one line a call and exits non-zero on any error above tolerance.

    python3 tools/smoke_sm90a.py
"""
import sys

import cupy
import numpy as np

import nbkernels

CASES = [((3, 1000, 264), (264, 704), 1.0), ((2, 513, 1000), (2, 1000, 304), 0.5),
         ((4096, 512), (512, 4096), 1.0), ((1536, 64), (64, 2816), 1.0), ((70, 136), (136, 72), 0.5)]


def main():
    rng = np.random.default_rng()
    bad = 0
    for sa, sb, alpha0 in CASES:
        for call, alpha in (("first", alpha0), ("again", alpha0 * 0.75)):
            a = rng.standard_normal(sa).astype(np.float16)
            b = rng.standard_normal(sb).astype(np.float16)
            want = alpha * np.matmul(a.astype(np.float64), b.astype(np.float64))
            out = cupy.full(want.shape, np.nan, np.float16)
            nbkernels.gemm(cupy.asarray(a), cupy.asarray(b), alpha=alpha, out=out,
                           variant="sm90a")
            got = cupy.asnumpy(out).astype(np.float64)
            err = np.abs(got - want).max() / np.abs(want).max()
            ok = np.isfinite(got).all() and err < 2e-3
            bad += not ok
            print(f"{sa} x {sb} alpha {alpha} ({call}): relative error {err:.2e} "
                  f"{'ok' if ok else 'FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
