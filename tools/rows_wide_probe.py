"""16-bit rms_norm's two builds side by side in one process (perf-notes r27; measurement
only): ``python tools/rows_wide_probe.py [--dtypes bf16,f16] [--json F]``. At 8192^2 and
32768x4096: the automatic plan, and each build forced in a block per row (32 elements a
thread: 256 or 128 threads; 64: 128 or 64), % of the copy measured in the same process.
Inputs as tools/rows_ab_quick.py (made on the device, rotated past L2); timing as rows.bench."""
import argparse

import numpy as np


def main():
    import cupy

    import nbkernels
    from nbkernels.rows import RowConfig, bench, host, rms_norm_ref

    from rows_ab_quick import device_normals, rotated, save_json  # tools/ is the script's directory

    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json")
    a = ap.parse_args()
    bw = bench.copy_bandwidth()
    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    print(f"copy {bw / 1e9:.0f} GB/s, {host.sm_limits().dram_gbps_per_sm:.1f} GB/s of DRAM an SM")
    out = {"copy_GBps": bw * 1e-9, "rows": []}
    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in bench.LARGE:
            x0, w = device_normals((rows, n), dtype), device_normals((n,), dtype)
            xs = rotated(x0, l2)
            cells = []
            for label, cfg in (("auto", None),
                               ("32/row", RowConfig("block", n // 32, blocks=rows, buffers=1)),
                               ("64/row", RowConfig("block", n // 64, blocks=rows, buffers=1,
                                                    per_thread=64))):
                fn = (lambda x, w, *_: nbkernels.rms_norm(x, w)) if cfg is None else \
                    (lambda x, w, *_, c=cfg: nbkernels.rms_norm(x, w, config=c))
                ref = fn(xs[0], w)  # checked once against float64 on sampled rows
                idx = np.random.default_rng().choice(rows, 8, replace=False)
                want = rms_norm_ref(xs[0][idx].get(), w.get())
                got = ref[idx].get().astype(np.float64)
                err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                t, _ = bench.time_events(fn, [(x, w) for x in xs], a.reps)
                pc = bench.bytes_moved("rms_norm", rows, n, dtype.itemsize) / t / bw
                plan = dict(host.LAST_PLAN)
                cells.append(f"{label} {100 * pc:5.1f} [{plan['blocks']}x{plan['threads']}, "
                             f"{plan['buffers']} buf, {plan['regs']} regs] e{err:.0e}")
                out["rows"].append({"dtype": dt, "shape": [rows, n], "layout": label,
                                    "of_copy": pc, "plan": plan, "relerr": err})
            print(f"rms_norm {dt} {rows}x{n}: " + "  ".join(cells), flush=True)
            del xs, x0
            cupy.get_default_memory_pool().free_all_blocks()
    save_json(a.json, out)


if __name__ == "__main__":
    main()
