"""Compile every kernel the suite will time into $NBKERNELS_CACHE_DIR, in parallel processes.

    python benchmarks_asv/prewarm.py [--jobs N] [--absent FILE]

One kernel compiles in ~13 s on one core, and a commit's suite needs ~15 of them; asv then
measures each family in one process that would compile them one after the other. Here each
case runs once in a pool of processes (one core each), and the measuring processes find every
cubin on disk. Cases are taken from the benchmark modules themselves (``prewarm_tasks``), so
the two lists cannot drift apart. ``--absent FILE`` receives the benchmark modules whose
kernels this commit lacks altogether (``absent()``), for run.sh to leave out: each of their
~70 cases would cost a process to report n/a. A case that fails here is reported (exit status 1) and fails
again, with its message, in the benchmark.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

FAMILIES = ("benchmarks.gemm", "benchmarks.rows")


def _run(module, task):
    import importlib

    t = time.perf_counter()
    try:
        importlib.import_module(module).prewarm(task)
    except Exception:
        return module, task, time.perf_counter() - t, traceback.format_exc(limit=4)
    return module, task, time.perf_counter() - t, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--absent", help="write the modules this commit has no kernels for here")
    args = ap.parse_args(argv)
    import importlib

    from benchmarks._common import check_installed_commit, gpu_skip_reason

    check_installed_commit()

    present = []
    with open(args.absent or os.devnull, "w") as absent:
        for name in FAMILIES:
            module = importlib.import_module(name)
            why = module.absent() if hasattr(module, "absent") else None
            if why:
                print(f"prewarm: {name} left out at this commit: {why}")
                absent.write(name.split(".", 1)[1] + "\n")
            else:
                present.append(module)
    why = gpu_skip_reason()
    if why:
        print(f"prewarm: nothing to compile: {why}")
        return 0
    tasks = [(m.__name__, t) for m in present for t in m.prewarm_tasks()]
    t0 = time.perf_counter()
    failed = 0
    # spawn: a forked child would inherit this process's CUDA state (gpu_skip_reason inits it)
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
        for module, task, seconds, error in pool.map(_run, *zip(*tasks)):
            if error:
                failed += 1
                print(f"prewarm: {module} {task} failed after {seconds:.1f} s:\n{error}")
    print(f"prewarm: {len(tasks)} cases in {time.perf_counter() - t0:.1f} s with {args.jobs} "
          f"processes ({failed} failed); cache {os.environ.get('NBKERNELS_CACHE_DIR', '(default)')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
