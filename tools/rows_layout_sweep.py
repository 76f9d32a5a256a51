"""Every looping layout of the row reductions on today's kernels (perf-notes r18; measurement
only): ``python tools/rows_layout_sweep.py [--ops ...] [--dtypes bf16,f32] [--json F]``.

For each op, dtype and issue size (``rows.bench.LARGE``) it times the automatic plan, a block
per row (``NBKERNELS_ROWS_LOOP=0``), and the block layout of the automatic plan's threads
with ``buffers`` 1, 2, 4 and ``blocks`` = k x SMs for k = 1 .. 6, each as % of the copy
measured in the same process. Inputs as ``tools/rows_ab_quick.py`` (made on the device,
rotated past L2); timing as ``rows.bench`` (CUDA events behind a spin kernel, median).
Prints one line per case with the best layout last."""
import argparse
import os
import time
from dataclasses import replace



def main():
    import cupy

    import nbkernels
    from nbkernels.rows import bench, config as cfgmod, host
    from nbkernels.rows.bench import LARGE

    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="rms_norm,layer_norm,softmax")
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--per-sm", default="1,2,3,4,5,6")
    ap.add_argument("--shapes", default=",".join(f"{r}x{n}" for r, n in LARGE),
                    help="ROWSxN,... (default: the issue's sizes)")
    ap.add_argument("--loops", default="yes", choices=("yes", "no"),
                    help="no: time only the automatic plan and a block per row")
    ap.add_argument("--rows-per-block", default="no", choices=("yes", "no"),
                    help="yes: also blocks of 2 and 4 rows each, in row order")
    ap.add_argument("--block-rows", default="2x2,4x2,4x4",
                    help="with --rows-per-block yes: ROWSxBUFFERS,... (rows a block, buffers)")
    ap.add_argument("--ln-row-bytes", type=int, default=0,
                    help="an experiment: layer_norm's bytes of row a thread stages "
                         "(layer_norm_kernel.ROW_BYTES, 128: 64 16-bit elements); builds go to "
                         "a private disk cache, whose keys do not see the change")
    ap.add_argument("--ln-vectors", default="same", choices=("same", "none", "f32"),
                    help="layer_norm's weight and bias: in x's dtype (same), None (nothing "
                         "staged beside the rows), or float32 (twice the staged bytes of 16-bit "
                         "x); how much the staged vectors' shared memory costs (perf-notes r20)")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.block_rows = [tuple(map(int, v.split("x"))) for v in a.block_rows.split(",")]
    if a.ln_row_bytes:
        import tempfile

        from nbkernels.rows import layer_norm_kernel
        os.environ["NBKERNELS_CACHE_DIR"] = tempfile.mkdtemp(prefix="nbk_ln_")
        layer_norm_kernel.ROW_BYTES = a.ln_row_bytes
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    bw = bench.copy_bandwidth()
    print(f"copy {bw / 1e9:.0f} GB/s, {sms} SMs", flush=True)
    out = {"copy_GBps": bw * 1e-9, "sms": sms, "cases": []}
    t0 = time.perf_counter()

    from rows_ab_quick import device_normals as rand, rotated, save_json  # tools/: this path

    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in (tuple(map(int, s.split("x"))) for s in a.shapes.split(",")):
            x0, w = rand((rows, n), dtype), rand((n,), dtype)
            wv = {"same": w, "none": None, "f32": w.astype(cupy.float32)}[a.ln_vectors]
            sets = [(x,) for x in rotated(x0, l2)]
            for op in a.ops.split(","):
                def fn(x, cfg=None, op=op):
                    if op == "softmax":
                        return nbkernels.softmax(x, config=cfg)
                    if op == "layer_norm":
                        return nbkernels.layer_norm(x, wv, wv, config=cfg)
                    return nbkernels.rms_norm(x, w, config=cfg)

                per = bench.bytes_moved(op, rows, n, dtype.itemsize)

                def timed(label, cfg=None):
                    t, _ = bench.time_events(lambda x: fn(x, cfg), sets, a.reps)
                    return {"layout": label, "us": t * 1e6, "of_copy": per / t / bw,
                            "plan": dict(host.LAST_PLAN)}

                res = [timed("auto")]
                auto = res[0]["plan"]
                os.environ["NBKERNELS_ROWS_LOOP"] = "0"
                try:
                    res.append(timed("per-row"))
                finally:
                    os.environ.pop("NBKERNELS_ROWS_LOOP", None)
                base = cfgmod.RowConfig("block", min(auto["threads"], cfgmod.MAX_THREADS))
                # k rows a block, blocks in row order as in a block per row, the next rows'
                # copies in flight behind the first (perf-notes r18, the H200)
                for k, b in (a.block_rows if a.rows_per_block == "yes" else ()):
                    if auto["threads"] <= cfgmod.MAX_THREADS and rows >= k * sms:
                        res.append(timed(f"rows/{k} {b}buf",
                                         replace(base, blocks=-(-rows // k), buffers=b)))
                for b in (1, 2, 4) if a.loops == "yes" else ():
                    for k in map(int, a.per_sm.split(",")):
                        r = timed(f"{b}buf x{k}", replace(base, blocks=k * sms, buffers=b))
                        p = r["plan"]
                        fit = cfgmod.resident_blocks(p["threads"], p["regs"] or 64,
                                                     p["smem"] + cfgmod.STATIC_SMEM)
                        r["resident_per_sm"] = fit
                        if k <= fit:  # past residency blocks queue: not a layout
                            res.append(r)
                best = max(res, key=lambda r: r["of_copy"])
                line = "  ".join(f"{r['layout']} {100 * r['of_copy']:.1f}" for r in res)
                print(f"{op:10s} {dt:4s} {rows}x{n}: {line}", flush=True)
                print(f"    auto [{auto['blocks']}x{auto['threads']}, {auto['buffers']} buf, "
                      f"{auto['regs']} regs] {100 * res[0]['of_copy']:.1f}% -> best "
                      f"{best['layout']} {100 * best['of_copy']:.1f}% "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
                out["cases"].append({"op": op, "dtype": dt, "shape": [rows, n], "results": res})
            sets = x0 = None
            cupy.get_default_memory_pool().free_all_blocks()
    save_json(a.json, out)


if __name__ == "__main__":
    main()
