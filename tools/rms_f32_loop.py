"""rms_norm beside a float32 weight, its automatic plan against blocks looping over the rows
(``NBKERNELS_ROWS_LOOP=1``: the weight staged once a block for the launch), in one process
(session 44, run H; measurement only): ``python tools/rms_f32_loop.py [--dtypes bf16,f16]``.
Same timing, inputs and bytes moved as ``tools/ln_vectors_cost.py``."""
import os
import time

from rows_ab_quick import (device_normals, dtype_rounds_args, rotated,  # tools/: this
                           timing_setup)  # script's path


def main():
    import cupy

    import nbkernels
    from nbkernels.rows import bench, host

    a = dtype_rounds_args(2)
    t0, bw, l2 = timing_setup()
    for dt in a.dtypes.split(","):
        dtype = bench.dtype_named(dt)
        for rows, n in bench.LARGE:
            x0 = device_normals((rows, n), dtype)
            w32 = device_normals((n,), bench.dtype_named("f32"))
            w16 = device_normals((n,), dtype)
            sets = [(x,) for x in rotated(x0, l2)]
            for r in range(a.rounds):
                for name, w, mode in (("w16 auto", w16, ""), ("w32 auto", w32, ""),
                                      ("w32 loop1", w32, "1")):
                    if mode:
                        os.environ["NBKERNELS_ROWS_LOOP"] = mode
                    t, _ = bench.time_events(lambda x: nbkernels.rms_norm(x, w), sets, a.reps)
                    os.environ.pop("NBKERNELS_ROWS_LOOP", None)
                    p = host.LAST_PLAN
                    print(f"round {r + 1} {dt:4s} {rows}x{n} {name:9s} {t * 1e6:7.1f} us "
                          f"{100 * 2 * x0.nbytes / t / bw:5.1f}% of copy [{p['blocks']}x"
                          f"{p['threads']}, {p['buffers']} buf, {p['smem'] // 1024} KB] at "
                          f"{time.perf_counter() - t0:.0f} s", flush=True)
            del sets, x0
            cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
