"""Is the last, partly filled round of rows a cost? (perf-notes r15; measurement only.)

The looping row layout launches as many blocks as stay resident and block b takes rows b,
b + blocks, ... So 8192 rows on 264 blocks take 32 rounds, the last with 8 rows. If a round's
time is set by each block's per-row latency (not by DRAM bandwidth), that last round costs a
whole one: about 3% at 31.03 rows a block. This times each op at the issue's row count R, at
31 and 32 full rounds of the plan's blocks around it (same row length, same inputs' dtype),
and prints us per row relative to R's.

python tools/rows_tail.py [--ops rms_norm,layer_norm,softmax] [--dtypes bf16,f32]
"""
import argparse

import numpy as np


def main():
    import cupy

    from nbkernels.rows import bench, host

    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="rms_norm,layer_norm,softmax")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    rng = np.random.default_rng()
    bw = bench.copy_bandwidth()
    print(f"copy {bw / 1e9:.0f} GB/s")
    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in bench.LARGE:
            for op in a.ops.split(","):
                fn = bench._fns(op)[0]
                pool = bench.Pool(rows, n, dtype, 1, rng)
                fn(*pool.sets(op)[0])
                cupy.cuda.get_current_stream().synchronize()
                blocks = host.LAST_PLAN["blocks"]
                del pool
                rounds = rows / blocks
                counts = [rows, int(rounds) * blocks, -(-rows // blocks) * blocks]
                res = []
                for r in counts:
                    pool = bench.Pool.rotating(r, n, dtype, rng)
                    t, _ = bench.time_events(fn, pool.sets(op), a.reps)
                    res.append((r, t, bench.bytes_moved(op, r, n, dtype.itemsize) / t / bw))
                    del pool
                    cupy.get_default_memory_pool().free_all_blocks()
                per = res[0][1] / res[0][0]
                print(f"{op:11s} {dt} {rows}x{n} blocks={blocks} rows/block={rounds:.2f}  " + "  ".join(
                    f"{r} rows: {t * 1e6:.1f} us ({pc * 100:.1f}% of copy, per row {t / r / per:.3f})"
                    for r, t, pc in res), flush=True)


if __name__ == "__main__":
    main()
