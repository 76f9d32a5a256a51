"""Short rows in the lanes layout against the staged one and torch eager, in one process
(perf-notes r63; measurement only): ``python tools/softmax_lanes_ab.py [--ops softmax,rms_norm]
[--dtypes bf16,f32] [--sizes 262144x197,...] [--json F]`` (ops with a lanes layout: softmax,
rms_norm, rms_norm_residual, layer_norm; default softmax) [--variants auto,lanes16/128,torch].

Each size is timed as the package picks it with the lanes layout off (``staged``:
config.LANES_ROWS 0: the warp loop of session 51), as it picks it now (``auto``), in
the lanes layout at a fixed number of lanes a row and threads a block (``lanesG/B``: the
elements a thread still fitted to the row, as config.lanes_config does) and torch eager
(``rows.bench``'s peers); % of the 1 GiB copy (rows_ab_quick's inputs, rotation and timing).""" 
import time

import numpy as np

from rows_ab_quick import (device_normals, fixed_lanes, input_sets, rotated, row_args,
                           save_json, timing_setup)

FIXED = [(8, 128), (16, 128), (32, 128), (8, 256)]


def main():
    import cupy
    import torch

    from nbkernels.rows import bench, config as cfgmod, host

    a, sizes = row_args("softmax", "262144x197,262144x200,262144x64,131072x256,131072x500,"
                                   "65536x768,65536x1000,65536x1024", "rows x n, comma-separated",
                        lambda ap: ap.add_argument("--variants", help="only these variants "
                                                   "(labels as printed)"))
    t0, bw, l2 = timing_setup()
    auto_rows, auto_cfg = cfgmod.LANES_ROWS, host.lanes_config

    def fixed(G, B):
        def pick(r, groups_max=None):  # the op's group limit: not asked, the lanes fixed
            return fixed_lanes(r.n, r.view.dtype.itemsize, G, B)
        return pick

    variants = [("staged", 0, auto_cfg), ("auto", auto_rows, auto_cfg)]
    variants += [(f"lanes{G}/{B}", 1 << 20, fixed(G, B)) for G, B in FIXED]
    variants += [("torch", None, None)]
    if a.variants:  # only these (labels as printed)
        unknown = set(a.variants.split(",")) - {v[0] for v in variants}
        if unknown:
            raise SystemExit(f"--variants: no variant {sorted(unknown)}; expected labels of "
                             f"{[v[0] for v in variants]}")
        variants = [v for v in variants if v[0] in a.variants.split(",")]
    out = {"copy_GBps": bw * 1e-9, "rows": []}
    for op in a.ops.split(","):
        ours, theirs = bench._fns(op)[:2]
        for dt in a.dtypes.split(","):
            dtype = bench.dtype_named(dt)
            for rows, n in sizes:
                x0, w = device_normals((rows, n), dtype), device_normals((n,), dtype)
                xs = rotated(x0, l2)
                sets = input_sets(op, xs, w, [x.copy() for x in xs])
                moved = bench.bytes_moved(op, rows, n, dtype.itemsize)
                ref = theirs(*sets[0])
                ref = (ref[0] if isinstance(ref, tuple) else ref).float()
                cells = []
                for label, lrows, pick in variants:
                    fn = theirs
                    if pick is not None:
                        cfgmod.LANES_ROWS = lrows
                        host.lanes_config = pick
                        if pick is not auto_cfg and pick(_R(n, dtype)) is None:
                            continue  # the row needs more than 32 lanes of 32
                        fn = ours
                    host.LAST_PLAN.clear()
                    host._FAST.clear()  # a repeat call replays the launch it remembered:
                    try:  # the first variant's, whatever the layout picks now
                        got = fn(*sets[0])
                    except Exception as e:  # a layout that cannot take these rows: skipped
                        print(f"  {label}: {type(e).__name__}: {e}")
                        continue
                    got = got[0] if isinstance(got, tuple) else got
                    err = float((torch.from_dlpack(got).float() - ref).abs().max())
                    plan = dict(host.LAST_PLAN)  # the first call's (the repeats replay it)
                    t, _ = bench.time_events(fn, sets, a.reps)
                    pc = moved / t / bw
                    cells.append((label, pc, err, plan.get("layout")))
                    out["rows"].append({"op": op, "dtype": dt, "shape": [rows, n],
                                        "variant": label, "us": t * 1e6, "of_copy": pc,
                                        "maxerr": err, "plan": plan})
                host.lanes_config, cfgmod.LANES_ROWS = auto_cfg, auto_rows
                torch_pc = next((c[1] for c in cells if c[0] == "torch"), None)

                def ratio(lab, pc):  # against torch where torch was timed
                    return "" if lab == "torch" or torch_pc is None else f" ({pc / torch_pc:.2f}x)"

                print(f"{op} {dt:4s} {rows}x{n}: " + "  ".join(
                    f"{lab} {100 * pc:5.1f}"
                    f"{ratio(lab, pc)}"
                    f"{'' if lay is None else f' [{lay}]'}"
                    f"{' ERR %.1e' % err if err > 2e-2 * (1 + 100 * (op != 'softmax')) else ''}"
                    for lab, pc, err, lay in cells) + f"  at {time.perf_counter() - t0:.0f} s",
                    flush=True)
                del xs, x0, sets
                cupy.get_default_memory_pool().free_all_blocks()
    save_json(a.json, out)


class _R:
    """What a layout pick reads of the rows: their length and dtype."""

    def __init__(self, n, dtype):
        self.n, self.view = n, type("V", (), {"dtype": np.dtype(dtype)})()


if __name__ == "__main__":
    main()
