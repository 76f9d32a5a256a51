"""Experiment (perf-notes r7): does capping the row kernels' registers buy back the residency
that session 4's instruction cut spent (88-128 registers: 2 blocks of 256 threads per SM)?

Caps are launch bounds ``(max threads, min blocks)``; ptxas then fits the kernel under
``65536 / (threads x blocks)`` registers (rounded down to 8).

``python tools/rows_regcap.py static [--arch sm_90a] [--jobs 2]``: no GPU. Compiles every
op x dtype under each cap; prints registers, spill bytes and static SASS instructions per
element of the row loop (:mod:`nbkernels.rows.sasscount`).

Session 5's answer (perf-notes r7): every reduction kernel spills at 80 registers, and 96
buys no residency for 256-thread blocks, so the caps were not taken to the GPU.
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
        ops, *_ = sasscount.count(stem.with_suffix(".sass").read_text(), 8 if kind == "f32" else 4)
        per = sum(ops.values()) / sasscount.PER_THREAD
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


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("static")
    s.add_argument("--arch", default="sm_90a")
    s.add_argument("--caps", default="128,96,80,64")
    s.add_argument("--jobs", type=int, default=2)
    static(ap.parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
