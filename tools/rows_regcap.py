"""Experiment (perf-notes r7): does capping the row kernels' registers buy back the residency
that session 4's instruction cut spent (88-128 registers: 2 blocks of 256 threads per SM)?

Caps are launch bounds ``(max threads, min blocks)``; ptxas then fits the kernel under
``65536 / (threads x blocks)`` registers (rounded down to 8).

``python tools/rows_regcap.py static [--arch sm_90a] [--jobs 2]``: no GPU. Compiles every
op x dtype under each cap; prints registers, spill bytes and static SASS instructions per
element of the row loop (:mod:`nbkernels.rows.sasscount`).

Session 5's answer (perf-notes r7): every reduction kernel spills at 80 registers, and 96
buys no residency for 256-thread blocks, so the caps were not taken to the GPU.

``python tools/rows_regcap.py gpu --caps none,80,64 [--build-only]`` (device machine, session 8,
perf-notes r10): builds rms_norm, layer_norm and softmax under each cap (a cache key per cap)
and times them at 8192 x 8192 and 32768 x 4096 like the row benchmark (percent of a 1 GiB
copy timed in the same process); the loop's grid follows each build's real registers, so a
cap that fits 3 or 4 blocks per SM launches that many. Only the nbkernels kernels are timed.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

CAPS = {"128": (512, 1), "96": (320, 2), "80": (256, 3), "72": (224, 4), "64": (256, 4)}


def _capped_build(op, kind, bounds, arch):
    from nbkernels.rows import aot

    pyfunc, sig, _, dyn = aot._build(op, kind, arch)
    return pyfunc, sig, bounds, dyn


def _static_one(job):
    import functools

    from nbkernels import aot
    from nbkernels.rows import sasscount

    op, kind, cap, arch, out = job
    v = aot.Variant(f"rows/{op}/{kind}", "sm_75",
                    functools.partial(_capped_build, op, kind, CAPS[cap]))
    row = aot.compile_variant(v, arch, out, "ptxas")
    stem = Path(out) / arch / v.name.replace("/", "__")
    per = None
    if row.status == "ok" and stem.with_suffix(".sass").exists():
        P = sasscount.per_thread(stem.name)
        ops, *_ = sasscount.count(stem.with_suffix(".sass").read_text(),
                                  P * sasscount.element_bytes(stem.name) // 16)
        per = sum(ops.values()) / P
    return op, kind, cap, row.status, row.registers, row.spill_stores, row.spill_loads, per


def static(args):
    from nbkernels.rows.aot import OPS

    jobs = []
    for cap in args.caps.split(","):
        out = tempfile.mkdtemp(prefix=f"regcap{cap}_")
        jobs += [(op, kind, cap, args.arch, out) for op in OPS for kind in ("bf16", "f32")]
    print(f"{'op':18} {'dtype':5} {'cap':>4} {'status':6} {'regs':>4} {'spill st/ld':>11} "
          f"{'SASS/elem':>9}", flush=True)
    with ProcessPoolExecutor(args.jobs) as ex:
        for op, kind, cap, st, regs, ss, sl, per in ex.map(_static_one, jobs):
            print(f"{op:18} {kind:5} {cap:>4} {st:6} {regs or 0:4d} {ss or 0:5d}/{sl or 0:<5d} "
                  f"{per or 0:9.1f}", flush=True)


GPU_OPS = ("rms_norm", "layer_norm", "softmax")


def _apply_cap(cap):
    """Build the row kernels of this process under launch bounds ``CAPS[cap]``, cached apart
    ("none": as shipped)."""
    if cap == "none":
        return
    from nbkernels import launch
    from nbkernels.rows import layer_norm_kernel, rms_norm_kernel, softmax_kernel

    key = launch.cache_key
    launch.cache_key = lambda name, parts, arch, cluster=None: key(
        name, tuple(parts) + (("cap", cap),), arch, cluster)
    for mod in (rms_norm_kernel, layer_norm_kernel, softmax_kernel):
        def build(*a, _build=mod.build):
            k = _build(*a)
            k.nbk_launch_bounds = CAPS[cap]
            return k
        mod.build = build


def gpu(args):
    import cupy
    import numpy as np

    import nbkernels
    from nbkernels.arrays import BF16
    from nbkernels.rows import host
    from nbkernels.rows.bench import LARGE, Pool, bytes_moved, copy_bandwidth, time_events

    _apply_cap(args.cap)
    rng = np.random.default_rng()
    fns = {"rms_norm": lambda x, w, b: nbkernels.rms_norm(x, w),
           "layer_norm": lambda x, w, b: nbkernels.layer_norm(x, w, b),
           "softmax": lambda x, w, b: nbkernels.softmax(x)}
    bw = None if args.build_only else copy_bandwidth()
    dtypes = {"bf16": BF16, "f32": np.dtype(np.float32)}
    for dt in args.dtypes.split(","):
        dtype = dtypes[dt]
        for rows, n in LARGE if not args.build_only else [(64, 8192)]:
            pool = Pool(rows, n, dtype, 2, rng)
            for op in args.ops.split(","):
                sets = [(x, pool.w, pool.b) for x, _ in pool.pairs]
                if args.build_only:
                    for _ in range(2):  # the second call is planned with the real registers
                        fns[op](*sets[0])
                    continue
                t, _ = time_events(fns[op], sets, 20)
                plan = host.LAST_PLAN
                print(f"cap {args.cap:>4} {op:10} {dt:4} {rows}x{n}: {t * 1e6:7.1f} us "
                      f"{100 * bytes_moved(op, rows, n, dtype.itemsize) / t / bw:5.1f}% of copy"
                      f"  [{plan['blocks']}x{plan['threads']}, {plan['regs']} regs]", flush=True)
            del pool
            cupy.get_default_memory_pool().free_all_blocks()


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("static")
    s.add_argument("--arch", default="sm_90a")
    s.add_argument("--caps", default="128,96,80,64")
    s.add_argument("--jobs", type=int, default=2)
    g = sub.add_parser("gpu")
    g.add_argument("--cap", default="none", choices=["none", *CAPS])
    g.add_argument("--build-only", action="store_true")
    g.add_argument("--ops", default=",".join(GPU_OPS))
    g.add_argument("--dtypes", default="bf16,f32")
    a = ap.parse_args(argv)
    (static if a.cmd == "static" else gpu)(a)


if __name__ == "__main__":
    main(sys.argv[1:])
