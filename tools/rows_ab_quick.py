"""% of copy of row ops in one process, for A/B runs between trees (perf-notes r16;
measurement only): ``python tools/rows_ab_quick.py [--ops ...] [--dtypes bf16,f32] [--json F]``
(ops: rms_norm, rms_norm_residual, layer_norm, softmax, swiglu) [--sizes 8192x8192,16384x5120].

Like ``rows.bench``'s large sizes (same timing: ``matmul.bench._time``, CUDA events behind a
spin kernel after the clock settles; same bytes-moved formula and 1 GiB copy), without the
torch and CuPy peers and with faster inputs: one random array per (dtype, shape) made on the
device (float32 normals; bfloat16 as their upper 16 bits, i.e. truncated), and the rotating
sets as device copies of it (distinct buffers, together past L2). The same values in every
set do not change what a bandwidth-bound kernel takes."""
import argparse
import json
import time

LARGE = [(8192, 8192), (32768, 4096)]  # rows.bench.LARGE (not imported: no numba before argv)

import numpy as np


def device_normals(shape, dtype):
    """float32 normals made on the device, cast to ``dtype`` (bfloat16: their upper 16 bits,
    i.e. truncated)."""
    import cupy

    x = cupy.random.standard_normal(shape, dtype=cupy.float32)
    if dtype == np.float32:
        return x
    if dtype == np.float16:
        return x.astype(cupy.float16)
    return (x.view(cupy.uint32) >> 16).astype(cupy.uint16).view(dtype)  # bfloat16


def rotated(x0, l2):
    """``x0`` and device copies of it, together past the L2 cache of ``l2`` bytes three
    times where 4 suffice (``rows.bench.rotation_count``): the sets a timing rotates."""
    from nbkernels.rows import bench

    count = bench.rotation_count(2 * x0.nbytes, l2, most=4)
    return [x0] + [x0.copy() for _ in range(count - 1)]


def timing_setup():
    """(start time, the 1 GiB copy's bandwidth in B/s, the L2 size in bytes), the copy printed:
    what every row measurement tool times against and rotates its inputs past."""
    import cupy

    from nbkernels.rows import bench

    t0 = time.perf_counter()
    bw = bench.copy_bandwidth()
    print(f"copy {bw / 1e9:.0f} GB/s", flush=True)
    return t0, bw, cupy.cuda.Device().attributes["L2CacheSize"]


def dtype_rounds_args(rounds):
    """--dtypes (default bf16,f16), --rounds (default ``rounds``) and --reps, parsed: the
    arguments of the tools that time 16-bit rows in alternated rounds (ln_vectors_cost.py,
    rms_f32_loop.py)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--reps", type=int, default=30)
    return ap.parse_args()


def save_json(path, out):
    """Write ``out`` to ``path`` as JSON (nothing where no path was given); shared by the row
    measurement tools."""
    if path:
        with open(path, "w") as f:
            json.dump(out, f, indent=1)


def row_args(ops, sizes, sizes_help, extra=None):
    """--ops (default ``ops``), --dtypes (bf16,f32), --reps (30), --json and --sizes (default
    ``sizes``), and a tool's own options (``extra(parser)`` adds them), parsed, and the sizes
    as (rows, n) pairs: the arguments of the tools that time row ops at sizes (this one,
    softmax_lanes_ab.py, lanes_profile.py)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default=ops)
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--sizes", default=sizes, help=sizes_help)
    if extra is not None:
        extra(ap)
    a = ap.parse_args()
    return a, [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]


def fixed_lanes(n, itemsize, G, B=128):
    """The lanes layout at ``G`` lanes a row and ``B`` threads a block for rows of ``n``
    elements of ``itemsize`` bytes, a lane's elements fitted to the row as
    ``config.lanes_config`` fits them; None where 32 elements a lane cannot hold the row."""
    from nbkernels.rows import config as cfgmod

    p = cfgmod.lane_elements(n, 16 // itemsize, G)
    return cfgmod.RowConfig("lanes", G, B // G, per_thread=p) if p <= 32 else None


def input_sets(op, xs, w, ups):
    """The argument tuples of ``rows.bench._fns(op)`` callables for each rotated input in
    ``xs``: softmax x alone; swiglu and rms_norm with a residual x, its second input from
    ``ups`` and the weight; the norms x, the weight and (layer_norm's bias) the weight."""
    if op == "softmax":
        return [(x,) for x in xs]
    if op in ("swiglu", "rms_norm_residual"):
        return [(x, u, w) for x, u in zip(xs, ups)]
    return [(x, w, w) for x in xs]


def main():
    import cupy

    from nbkernels.rows import bench, host

    a, sizes = row_args("layer_norm,softmax,rms_norm", ",".join(f"{r}x{n}" for r, n in LARGE),
                        "rows x n, comma-separated (default: the issue's two large sizes)")
    rand = device_normals

    t0, bw, l2 = timing_setup()
    out = {"copy_GBps": bw * 1e-9, "rows": []}
    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in sizes:
            x0, w = rand((rows, n), dtype), rand((n,), dtype)
            xs = rotated(x0, l2)
            # swiglu's second input, rms_norm's residual
            ups = [x0.copy() for _ in xs] if ("swiglu" in a.ops or "residual" in a.ops) else []
            for op in a.ops.split(","):
                fn = bench._fns(op)[0]
                sets = input_sets(op, xs, w, ups)
                t, _ = bench.time_events(fn, sets, a.reps)
                pc = bench.bytes_moved(op, rows, n, dtype.itemsize) / t / bw
                # the last loop or register-row launch's plan (split phases leave none: a
                # process whose first size is split rows has none to print)
                plan = dict(host.LAST_PLAN)
                host.LAST_PLAN.clear()
                out["rows"].append({"op": op, "dtype": dt, "shape": [rows, n], "us": t * 1e6,
                                    "of_copy": pc, "plan": plan})
                where = (f"[{plan['blocks']}x{plan['threads']}, {plan['buffers']} buf, "
                         f"{plan['regs']} regs, {plan.get('layout')}]" if plan else "[split]")
                print(f"{op:11s} {dt:4s} {rows}x{n} {t * 1e6:7.1f} us {100 * pc:5.1f}% of copy "
                      f"{where} at {time.perf_counter() - t0:.0f} s", flush=True)
            del xs, ups, x0
            cupy.get_default_memory_pool().free_all_blocks()
    save_json(a.json, out)


if __name__ == "__main__":
    main()
