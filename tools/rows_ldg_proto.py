"""Does a block-per-row rms_norm that loads its row straight into registers (LDG.128) beat the
package's, which stages rows through shared memory with cp.async? Measurement for perf-notes
r43 (H200): r42's run B put a 16 KB block-per-row copy with the row kernels' block reduction
between its loads and stores at 96.8% of CuPy's copy, where r39's cp.async rings reached
90-93% and 16-bit rms_norm at rows of 8192 runs 89.5-90.6.

A prototype, not a package kernel: full rows only (n = 128 threads x 8 elements x U loads),
16-bit x and weight, one block of 128 threads a row. Each thread loads its U 16-byte groups of
x (the row kernels' slot layout: group j of thread t at element (j * 128 + t) * 8), sums their
squares, ``rows.device.group_sum`` over the block, then scales and stores group by group. The
weight (``--wmode``): 0 read per group in the output pass (LDG, L1), 1 loaded with x before the
reduction (registers), 2 loaded all at once after the reduction.

``python tools/rows_ldg_proto.py`` times every prototype beside ``nbkernels.rms_norm`` and
CuPy's copy of the same bytes (``matmul.bench._time``), each output checked against the
float64 reference first; ``--sim`` checks the prototypes in numba's simulator on small rows.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

if "--sim" in sys.argv:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from numba import cuda, float32, int64, uint32, uint64  # noqa: E402

from nbkernels import intrinsics as I  # noqa: E402
from nbkernels.intrinsics import define  # noqa: E402
from nbkernels.rows.device import MAX_WARPS, group_sum, make_io, rsqrt_ftz  # noqa: E402
from nbkernels.rows.rms_norm_kernel import rms_norm_ref  # noqa: E402

T = 128
keep = define("nbk_proto_keep", "mov.b32 $d, $x;", outputs=("d:u32",), inputs=("x:u32",),
              side_effect=True, simulate=lambda x: np.uint32(x),
              doc="x through a volatile mov: the output pass unpacks the words again rather "
                  "than keeping pass 1's float32 values live.")


def make_kernel(kind, U, wmode):
    io = make_io(kind, True, per_thread=8 * U)
    unpack, pack = io.unpack_group, io.pack_group
    NW = 4 * U

    @cuda.jit(device=True, inline="always")
    def load(base, t, u, words, o):
        v = I.ld_global_v4(uint64(base + (u * T + t) * 16))
        for i in range(4):
            words[o + i] = v[i]

    @cuda.jit
    def rms_ldg(X, W, Y, n, eps):
        red = cuda.shared.array((2, MAX_WARPS), float32)
        t = int64(cuda.threadIdx.x)
        row = int64(cuda.blockIdx.x)
        xa = int64(I.gmem_addr(X, 0)) + row * n * 2
        ya = int64(I.gmem_addr(Y, 0)) + row * n * 2
        wa = int64(I.gmem_addr(W, 0))
        xw = cuda.local.array(NW, uint32)
        ww = cuda.local.array(NW, uint32)
        for u in range(U):
            load(xa, t, u, xw, 4 * u)
        if wmode == 1:
            for u in range(U):
                load(wa, t, u, ww, 4 * u)
        vals = cuda.local.array(8, float32)
        s0, s1 = float32(0), float32(0)
        for u in range(U):
            g = cuda.local.array(4, uint32)
            for i in range(4):
                g[i] = xw[4 * u + i]
            unpack(g, vals, 0)
            for k in range(0, 8, 2):
                s0 += vals[k] * vals[k]
                s1 += vals[k + 1] * vals[k + 1]
        ss = group_sum(s0 + s1, T, red, 0)
        inv = rsqrt_ftz(ss * (float32(1) / float32(n)) + eps)
        if wmode == 2:
            for u in range(U):
                load(wa, t, u, ww, 4 * u)
        for u in range(U):
            g = cuda.local.array(4, uint32)
            wg = cuda.local.array(4, uint32)
            for i in range(4):
                g[i] = keep(xw[4 * u + i])
            if wmode == 0:
                load(wa, t, u, wg, 0)
            else:
                for i in range(4):
                    wg[i] = ww[4 * u + i]
            wv = cuda.local.array(8, float32)
            unpack(g, vals, 0)
            unpack(wg, wv, 0)
            for k in range(8):
                vals[k] = vals[k] * inv * wv[k]
            pack(vals, 0, g)
            I.st_global_v4(uint64(ya + (u * T + t) * 16), (g[0], g[1], g[2], g[3]))

    return rms_ldg


PROTOS = {(kind, U, wm): None for kind in ("bf16", "f16") for U in (4, 8) for wm in (0, 1, 2)}


def kernel(kind, U, wmode):
    if PROTOS.get((kind, U, wmode)) is None:
        PROTOS[(kind, U, wmode)] = make_kernel(kind, U, wmode)
    return PROTOS[(kind, U, wmode)]


def np_dtype(kind):
    if kind == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float16)


def check(kind, U, wmode, rows, rng, to_dev, to_host):
    n = T * 8 * U
    dt = np_dtype(kind)
    x = (rng.standard_normal((rows, n)) * 3).astype(dt)
    w = rng.standard_normal(n).astype(dt)
    y = np.full((rows, n), np.nan, dt)  # poisoned
    dx, dw, dy = to_dev(x.reshape(-1)), to_dev(w), to_dev(y.reshape(-1))  # flat: one address
    kernel(kind, U, wmode)[rows, T](dx, dw, dy, np.int64(n), np.float32(1e-6))
    got = to_host(dy).reshape(rows, n).astype(np.float64)
    ref = rms_norm_ref(x, w, 1e-6)
    u = 2.0 ** -8 if kind == "bf16" else 2.0 ** -11  # the output's rounding, and a little
    err = np.max(np.abs(got - ref) / (np.abs(ref) + 1))
    return err <= 1.25 * u, err


def run_sim():
    rng = np.random.default_rng()
    bad = 0
    for kind in ("bf16", "f16"):
        for wm in (0, 1, 2):
            ok, err = check(kind, 4, wm, 2, rng,
                            lambda a: cuda.to_device(a.view(np.uint16)),
                            lambda d: d.copy_to_host().view(np_dtype(kind)))
            print(f"sim {kind} U4 wmode {wm}: {'ok' if ok else 'WRONG'} (max rel err {err:.2e})")
            bad += not ok
    return 1 if bad else 0


def run_gpu(reps=20):
    import warnings

    import cupy
    from numba.core.errors import NumbaPerformanceWarning

    warnings.simplefilter("ignore", NumbaPerformanceWarning)  # the 64-row checks' small grids

    import nbkernels
    from nbkernels.matmul.bench import _time
    from nbkernels.rows.bench import copy_bandwidth

    rng = np.random.default_rng()
    print(f"{'size':>12s} {'kind':4s} {'what':24s} {'us':>8s} {'GB/s':>7s} {'of copy':>8s}")
    for rows, n in ((8192, 8192), (32768, 4096)):
        U = n // (T * 8)
        for kind in ("bf16", "f16"):
            dt = np_dtype(kind)
            # correctness on the GPU first (fresh inputs, poisoned output)
            for wm in (0, 1, 2):
                ok, err = check(kind, U, wm, 64, rng,
                                lambda a: cupy.asarray(a.view(np.uint16)),
                                lambda d: cupy.asnumpy(d).view(dt))
                if not ok:
                    print(f"WRONG {kind} U{U} wmode {wm}: max rel err {err:.2e}")
                    return 1
            moved = 2 * rows * n * 2 + n * 2
            copy_bw = copy_bandwidth(2 * rows * n * 2, reps)
            nsets = 4  # 4 x 128 MiB of x and y: well over the 50-60 MiB L2
            xs = [cupy.asarray(rng.standard_normal((rows, n), np.float32).astype(dt).view(
                np.uint16)) for _ in range(nsets)]
            w = cupy.asarray(rng.standard_normal(n, np.float32).astype(dt).view(np.uint16))
            ys = [cupy.empty_like(x) for x in xs]
            sets = [(xs[i].ravel(), w, ys[i].ravel()) for i in range(nsets)]

            def report(what, fn, sets):
                t, _ = _time(fn, sets, reps)
                print(f"{rows:>6d}x{n:<5d} {kind:4s} {what:24s} {t * 1e6:8.1f} "
                      f"{moved / t * 1e-9:7.0f} {moved / t / copy_bw * 100:7.1f}%", flush=True)

            if kind == "bf16":  # CuPy has no bfloat16: the package's call on torch views
                import torch
                nbk_sets = [(torch.from_dlpack(x).view(torch.bfloat16),
                             torch.from_dlpack(w).view(torch.bfloat16)) for x in xs]
            else:
                nbk_sets = [(x.view(cupy.float16), w.view(cupy.float16)) for x in xs]
            report("nbkernels.rms_norm", lambda x, w_: nbkernels.rms_norm(x, w_, 1e-6), nbk_sets)
            for wm in (0, 1, 2):
                k = kernel(kind, U, wm)
                report(f"ldg U{U} wmode {wm}", lambda x, w_, y, k=k: k[rows, T](
                    x, w_, y, np.int64(n), np.float32(1e-6)), sets)
            del xs, ys, sets, nbk_sets
            cupy.get_default_memory_pool().free_all_blocks()
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sim", action="store_true", help="check the prototypes in the simulator")
    p.add_argument("--rounds", type=int, default=1, help="times the whole table is run")
    a = p.parse_args(argv)
    if a.sim:
        return run_sim()
    for r in range(a.rounds):
        print(f"round {r + 1}")
        if run_gpu():
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
