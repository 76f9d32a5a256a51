"""What layer_norm's weight and bias cost per row, measured (perf-notes r34; measurement
only): ``python tools/ln_vectors_cost.py [--dtypes bf16,f16] [--rounds 3]``.

In one process, at the issue's two large sizes, alternated ``--rounds`` times: layer_norm
with weight and bias, with float32 copies of them (r35: staged as float32, no conversions a
row), with the weight only, with neither (the kernel built without them: ``has_w`` /
``has_b``), and rms_norm beside them (with the weight in x's dtype and in float32); the same timing as ``rows_ab_quick``
(``matmul.bench._time``), the same inputs (device normals rotated past L2), and the plan
of each call's first round (later rounds replay the recorded launch without planning, so
``host.LAST_PLAN`` is not theirs). Bytes moved: x read and y written (the vectors' n
elements are left out, under 0.01% of a row set). What the vectors cost is the layer_norm
rows' difference, at the same plan, in the kernel's own instructions: their 16-bit words
converted to float32 each row (two instructions an element) and their shared-memory loads."""
import time

from rows_ab_quick import (device_normals, dtype_rounds_args, rotated,  # tools/: this
                           timing_setup)  # script's path


def main():
    import cupy

    import nbkernels
    from nbkernels.rows import bench, host

    a = dtype_rounds_args(3)
    t0, bw, l2 = timing_setup()
    f32 = {}  # float32 copies of the current size's weight and bias, by the 16-bit ones' id
    calls = {"ln w+b": lambda x, w, b: nbkernels.layer_norm(x, w, b),
             # float32 weight and bias beside 16-bit rows: the staging r35 would build
             # (no conversions a row, twice the vectors' shared-memory loads)
             "ln f32": lambda x, w, b: nbkernels.layer_norm(x, f32[id(w)], f32[id(b)]),
             "ln w": lambda x, w, b: nbkernels.layer_norm(x, w, None),
             "ln none": lambda x, w, b: nbkernels.layer_norm(x, None, None),
             "rms w": lambda x, w, b: nbkernels.rms_norm(x, w),
             "rms f32": lambda x, w, b: nbkernels.rms_norm(x, f32[id(w)])}
    table = {}
    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in bench.LARGE:
            x0 = device_normals((rows, n), dtype)
            w, b = device_normals((n,), dtype), device_normals((n,), dtype)
            f32.clear()
            f32.update({id(v): v.astype(cupy.float32) for v in (w, b)})
            sets = [(x, w, b) for x in rotated(x0, l2)]
            for r in range(a.rounds):
                for name, fn in calls.items():
                    t, _ = bench.time_events(fn, sets, a.reps)
                    pc = 2 * x0.nbytes / t / bw
                    p = host.LAST_PLAN
                    key = (dt, f"{rows}x{n}", name)
                    table.setdefault(key, []).append(100 * pc)
                    plan = (f" [{p['blocks']}x{p['threads']}, {p['buffers']} buf, "
                            f"{p['smem'] // 1024} KB, {p['regs']} regs]" if r == 0 else "")
                    print(f"round {r + 1} {dt:4s} {rows}x{n} {name:8s} {t * 1e6:7.1f} us "
                          f"{100 * pc:5.1f}% of copy{plan} at "
                          f"{time.perf_counter() - t0:.0f} s", flush=True)
            del sets, x0
            cupy.get_default_memory_pool().free_all_blocks()
    print("summary, % of copy by round:")
    for (dt, shape, name), v in table.items():
        print(f"{dt:4s} {shape:10s} {name:8s} " + "  ".join(f"{x:5.1f}" for x in v))


if __name__ == "__main__":
    main()
