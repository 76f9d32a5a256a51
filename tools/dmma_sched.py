"""The float64 GEMM's k-loop schedule switches (``dmma_kernel.SCHED``), for measurement:

    python tools/dmma_sched.py '{"paired": 1, "refill_piece": 1}' [bench arguments]

sets the switches before any kernel is built and runs ``nbkernels.matmul.bench`` in this
process, with its own kernel cache directory per switch set (the kernels' cache key does not
see the switches). Perf-notes d6 says what each switch does and what was measured.
"""
import json
import os
import sys


def main(argv):
    sched = json.loads(argv[0])
    tag = "-".join(f"{k}{v}" for k, v in sorted(sched.items())) or "default"
    os.environ["NBKERNELS_CACHE_DIR"] = f"/tmp/nbk-dmma-sched-{tag}"
    from nbkernels.matmul import bench, dmma_kernel

    dmma_kernel.SCHED.update(sched)
    print(f"dmma schedule {tag}", flush=True)
    return bench.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
