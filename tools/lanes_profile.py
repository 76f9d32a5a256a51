"""One call of each row op in the lanes layout, for ncu to count (perf-notes r65; measurement
only): ``ncu --metrics ... python tools/lanes_profile.py [--ops layer_norm,rms_norm]
[--dtypes bf16] [--sizes 262144x200] [--lanes 16]`` (--reps and --json: unused). Each op is
called twice on the same inputs (the first call builds the kernel; a profiler that skips no
launch counts both, so give it ``--launch-skip`` by kernel or read the second), in the lanes
layout at ``--lanes`` lanes a row, 128-thread blocks, a thread's elements fitted to the row
as ``config.lanes_config`` fits them (``rows_ab_quick.fixed_lanes``)."""
from rows_ab_quick import device_normals, fixed_lanes, input_sets, row_args


def main():
    import cupy

    from nbkernels.rows import bench, config as cfgmod, host

    a, sizes = row_args("layer_norm,rms_norm", "262144x200", "rows x n, comma-separated",
                        lambda ap: ap.add_argument("--lanes", type=int, default=16,
                                                   help="lanes a row (8, 16 or 32)"))
    for op in a.ops.split(","):
        ours = bench._fns(op)[0]
        for dt in a.dtypes.split(","):
            dtype = bench.dtype_named(dt)
            for rows, n in sizes:
                cfg = fixed_lanes(n, dtype.itemsize, a.lanes)
                if cfg is None:
                    print(f"{op} {dt} {rows}x{n}: {a.lanes} lanes of at most 32 elements "
                          "cannot hold the row; skipped", flush=True)
                    continue
                x, w = device_normals((rows, n), dtype), device_normals((n,), dtype)
                args = input_sets(op, [x], w, [x.copy()])[0]
                # the op's own lanes rule answered by this config (softmax_lanes_ab.py's way)
                cfgmod.LANES_ROWS, host.lanes_config = 1 << 20, lambda *_: cfg
                for _ in range(2):
                    ours(*args)
                cupy.cuda.Device().synchronize()
                print(f"{op} {dt} {rows}x{n}: lanes {cfg.threads}, {cfg.per_thread} elements a "
                      "lane", flush=True)


if __name__ == "__main__":
    main()
