"""Do the row kernels gain from loading a row straight into registers (LDG.128) instead of
staging it through shared memory with cp.async? Measurement for perf-notes r43 (H200): r42's
run B put a 16 KB block-per-row copy with the row kernels' block reduction between its loads
and stores at 96.8% of CuPy's copy, where r39's cp.async rings reached 90-93%.

Prototypes, not package kernels: full rows only (n = 128 threads x 8 elements x U loads),
16-bit, one block of 128 threads a row. Each thread loads its U 16-byte groups of x (the row
kernels' slot layout: group j of thread t at element (j * 128 + t) * 8) into packed registers,
reduces with ``rows.device``'s block reductions, then writes group by group, unpacking the
words again in each pass. ``rms`` (rms_norm), ``ln`` (layer_norm: sum and sum of squares, two
reductions) and ``softmax`` (max, then the sum of exponentials: two reductions, the exponent
computed again for the output). Weight and bias (``wmode``): 0 read per group in the output
pass (LDG, L1), 1 loaded with x before the reduction (registers), 2 loaded all at once after.

``python tools/rows_ldg_proto.py [--ops rms,ln,softmax] [--rounds N]`` checks every prototype
against the float64 reference on the GPU (fresh inputs, poisoned output), then times each
beside the package's call and a CuPy copy of x's bytes (``matmul.bench._time``); ``--sim``
checks the prototypes in numba's simulator on small rows.
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
from nbkernels.rows.device import (MAX_WARPS, NEG_INF, fast_exp, group_max, group_sum,  # noqa: E402
                                   make_io, rcp_ftz, rsqrt_ftz)
from nbkernels.rows.layer_norm_kernel import layer_norm_ref  # noqa: E402
from nbkernels.rows.rms_norm_kernel import rms_norm_ref  # noqa: E402
from nbkernels.rows.softmax_kernel import softmax_ref  # noqa: E402

T = 128
keep = define("nbk_proto_keep", "mov.b32 $d, $x;", outputs=("d:u32",), inputs=("x:u32",),
              side_effect=True, simulate=lambda x: np.uint32(x),
              doc="x through a volatile mov: the output pass unpacks the words again rather "
                  "than keeping pass 1's float32 values live.")


def make_kernel(kind, U, wmode, op="rms"):
    io = make_io(kind, True, per_thread=8 * U)
    unpack, pack = io.unpack_group, io.pack_group
    NW = 4 * U
    LN, SOFTMAX = op == "ln", op == "softmax"

    @cuda.jit(device=True, inline="always")
    def load(base, t, u, words, o):
        v = I.ld_global_v4(uint64(base + (u * T + t) * 16))
        for i in range(4):
            words[o + i] = v[i]

    @cuda.jit(device=True, inline="always")
    def group(words, u, vals):
        """Group u of the packed row as 8 float32 (through a volatile move: each pass unpacks
        the words again rather than keeping an earlier pass's float32 values live)."""
        g = cuda.local.array(4, uint32)
        for i in range(4):
            g[i] = keep(words[4 * u + i])
        unpack(g, vals, 0)

    @cuda.jit
    def proto(X, W, B, Y, n, eps):
        red = cuda.shared.array((4, MAX_WARPS), float32)
        t = int64(cuda.threadIdx.x)
        row = int64(cuda.blockIdx.x)
        xa = int64(I.gmem_addr(X, 0)) + row * n * 2
        ya = int64(I.gmem_addr(Y, 0)) + row * n * 2
        wa, ba = int64(I.gmem_addr(W, 0)), int64(I.gmem_addr(B, 0))
        xw = cuda.local.array(NW, uint32)
        ww = cuda.local.array(NW, uint32)
        bw = cuda.local.array(NW, uint32)
        for u in range(U):
            load(xa, t, u, xw, 4 * u)
        if wmode == 1 and not SOFTMAX:
            for u in range(U):
                load(wa, t, u, ww, 4 * u)
                if LN:
                    load(ba, t, u, bw, 4 * u)
        vals = cuda.local.array(8, float32)
        rn = float32(1) / float32(n)
        shift, scale = float32(0), float32(0)  # y = (x - shift) * scale [* w (+ b)]
        if SOFTMAX:
            mx = NEG_INF
            for u in range(U):
                group(xw, u, vals)
                for k in range(8):
                    mx = max(mx, vals[k])
            mx = group_max(mx, T, red, 0)
            s0, s1 = float32(0), float32(0)
            for u in range(U):
                group(xw, u, vals)
                for k in range(0, 8, 2):
                    s0 += fast_exp(vals[k] - mx)
                    s1 += fast_exp(vals[k + 1] - mx)
            shift, scale = mx, rcp_ftz(group_sum(s0 + s1, T, red, 1))
        else:
            s0, s1, q0, q1 = float32(0), float32(0), float32(0), float32(0)
            for u in range(U):
                group(xw, u, vals)
                for k in range(0, 8, 2):
                    q0 += vals[k] * vals[k]
                    q1 += vals[k + 1] * vals[k + 1]
                    if LN:
                        s0 += vals[k]
                        s1 += vals[k + 1]
            ss = group_sum(q0 + q1, T, red, 0)
            if LN:  # moments from sums: rows here are N(0, 3^2), no cancellation to fear
                shift = group_sum(s0 + s1, T, red, 1) * rn
                scale = rsqrt_ftz(ss * rn - shift * shift + eps)
            else:
                scale = rsqrt_ftz(ss * rn + eps)
        if wmode == 2 and not SOFTMAX:
            for u in range(U):
                load(wa, t, u, ww, 4 * u)
                if LN:
                    load(ba, t, u, bw, 4 * u)
        for u in range(U):
            g = cuda.local.array(4, uint32)
            wg = cuda.local.array(4, uint32)
            bg = cuda.local.array(4, uint32)
            wv = cuda.local.array(8, float32)
            bv = cuda.local.array(8, float32)
            group(xw, u, vals)
            if not SOFTMAX:
                if wmode == 0:
                    load(wa, t, u, wg, 0)
                    if LN:
                        load(ba, t, u, bg, 0)
                else:
                    for i in range(4):
                        wg[i] = ww[4 * u + i]
                        bg[i] = bw[4 * u + i]
                unpack(wg, wv, 0)
                if LN:
                    unpack(bg, bv, 0)
            for k in range(8):
                if SOFTMAX:
                    vals[k] = fast_exp(vals[k] - shift) * scale
                elif LN:
                    vals[k] = (vals[k] - shift) * scale * wv[k] + bv[k]
                else:
                    vals[k] = vals[k] * scale * wv[k]
            pack(vals, 0, g)
            I.st_global_v4(uint64(ya + (u * T + t) * 16), (g[0], g[1], g[2], g[3]))

    return proto


OPS = {"rms": (0, 1, 2), "ln": (0, 2), "softmax": (0,)}  # weight modes timed per op
PROTOS = {}


def kernel(kind, U, wmode, op):
    if (kind, U, wmode, op) not in PROTOS:
        PROTOS[(kind, U, wmode, op)] = make_kernel(kind, U, wmode, op)
    return PROTOS[(kind, U, wmode, op)]


def np_dtype(kind):
    if kind == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float16)


def check(kind, U, wmode, op, rows, rng, to_dev, to_host):
    n = T * 8 * U
    dt = np_dtype(kind)
    x = (rng.standard_normal((rows, n)) * 3).astype(dt)
    w = rng.standard_normal(n).astype(dt)
    b = rng.standard_normal(n).astype(dt)
    y = np.full((rows, n), np.nan, dt)  # poisoned
    dx, dw, db, dy = to_dev(x.reshape(-1)), to_dev(w), to_dev(b), to_dev(y.reshape(-1))
    kernel(kind, U, wmode, op)[rows, T](dx, dw, db, dy, np.int64(n), np.float32(1e-5))
    got = to_host(dy).reshape(rows, n).astype(np.float64)
    u = 2.0 ** -8 if kind == "bf16" else 2.0 ** -11  # the output's rounding, and a little
    if op == "softmax":  # against the row's largest probability
        ref = softmax_ref(x)
        err = np.max(np.abs(got - ref) / np.max(ref, axis=-1, keepdims=True))
        return err <= 2 * u, err
    ref = layer_norm_ref(x, w, b, 1e-5) if op == "ln" else rms_norm_ref(x, w, 1e-5)
    err = np.max(np.abs(got - ref) / (np.abs(ref) + 1))
    return err <= 1.25 * u, err


def run_sim():
    rng = np.random.default_rng()
    bad = 0
    for op, modes in OPS.items():
        for kind in ("bf16", "f16"):
            for wm in modes:
                ok, err = check(kind, 4, wm, op, 2, rng,
                                lambda a: cuda.to_device(a.view(np.uint16)),
                                lambda d: d.copy_to_host().view(np_dtype(kind)))
                print(f"sim {op} {kind} U4 wmode {wm}: {'ok' if ok else 'WRONG'} "
                      f"(max err {err:.2e})")
                bad += not ok
    return 1 if bad else 0


def run_gpu(ops, reps=20):
    import warnings

    import cupy
    from numba.core.errors import NumbaPerformanceWarning

    warnings.simplefilter("ignore", NumbaPerformanceWarning)  # the 64-row checks' small grids

    import nbkernels
    from nbkernels.matmul.bench import _time
    from nbkernels.rows.bench import copy_bandwidth

    rng = np.random.default_rng()
    print(f"{'size':>12s} {'kind':4s} {'what':28s} {'us':>8s} {'GB/s':>7s} {'of copy':>8s}")
    for rows, n in ((8192, 8192), (32768, 4096)):
        U = n // (T * 8)
        copy_bw = copy_bandwidth(2 * rows * n * 2, reps)  # a copy of x's bytes
        for kind in ("bf16", "f16"):
            dt = np_dtype(kind)
            # correctness on the GPU first (fresh inputs, poisoned output)
            for op, modes in ops.items():
                for wm in modes:
                    ok, err = check(kind, U, wm, op, 64, rng,
                                    lambda a: cupy.asarray(a.view(np.uint16)),
                                    lambda d: cupy.asnumpy(d).view(dt))
                    if not ok:
                        print(f"WRONG {op} {kind} U{U} wmode {wm}: max err {err:.2e}")
                        return 1
            nsets = 4  # 4 x 128 MiB of x and y: well over the 50-60 MiB L2
            xs = [cupy.asarray(rng.standard_normal((rows, n), np.float32).astype(dt).view(
                np.uint16)) for _ in range(nsets)]
            w, b = (cupy.asarray(rng.standard_normal(n, np.float32).astype(dt).view(np.uint16))
                    for _ in range(2))
            ys = [cupy.empty_like(x) for x in xs]
            sets = [(xs[i].ravel(), w, b, ys[i].ravel()) for i in range(nsets)]
            if kind == "bf16":  # CuPy has no bfloat16: the package's calls on torch views
                import torch

                def view(a):
                    return torch.from_dlpack(a).view(torch.bfloat16)
            else:
                def view(a):
                    return a.view(cupy.float16)
            nbk_sets = [(view(x), view(w), view(b)) for x in xs]
            calls = {"rms": lambda x, w_, b_: nbkernels.rms_norm(x, w_, 1e-5),
                     "ln": lambda x, w_, b_: nbkernels.layer_norm(x, w_, b_, 1e-5),
                     "softmax": lambda x, w_, b_: nbkernels.softmax(x)}
            for op, modes in ops.items():
                moved = 2 * rows * n * 2 + {"rms": 1, "ln": 2, "softmax": 0}[op] * n * 2

                def report(what, fn, sets, moved=moved, op=op):
                    t, _ = _time(fn, sets, reps)
                    print(f"{rows:>6d}x{n:<5d} {kind:4s} {op + ' ' + what:28s} {t * 1e6:8.1f} "
                          f"{moved / t * 1e-9:7.0f} {moved / t / copy_bw * 100:7.1f}%",
                          flush=True)

                report("nbkernels", calls[op], nbk_sets)
                for wm in modes:
                    k = kernel(kind, U, wm, op)
                    report(f"ldg U{U} wmode {wm}", lambda x, w_, b_, y, k=k: k[rows, T](
                        x, w_, b_, y, np.int64(n), np.float32(1e-5)), sets)
            del xs, ys, sets, nbk_sets
            cupy.get_default_memory_pool().free_all_blocks()
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sim", action="store_true", help="check the prototypes in the simulator")
    p.add_argument("--rounds", type=int, default=1, help="times the whole table is run")
    p.add_argument("--ops", default="rms,ln,softmax", help="of " + ",".join(OPS))
    a = p.parse_args(argv)
    if a.sim:
        return run_sim()
    for r in range(a.rounds):
        print(f"round {r + 1}")
        if run_gpu({op: OPS[op] for op in a.ops.split(",")}):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
