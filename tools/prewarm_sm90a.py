"""Build sm90a GEMM kernels into the disk cache in parallel processes before a device script
times or profiles them (a file, not stdin: multiprocessing's spawn re-imports the main module).

    python3 tools/prewarm_sm90a.py [--kinds bf16,f16] default 128x256x4ke2 ...

Layouts: row-major a and b (a K-major, b N-major), as the bench and tools/profile_ncu.py make
them; ``--layouts all``: the four operand majors (as the GPU tests' cases need).
"""
import argparse
import sys
import time


def main(argv=None):
    from nbkernels.matmul import bench_hopper as bh, wgmma_config as wc

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="+", help="'default' or a bench config (BMxBNxSTAGES...)")
    ap.add_argument("--kinds", default="bf16")
    ap.add_argument("--layouts", choices=("rr", "all"), default="rr")
    args = ap.parse_args(argv)
    cfgs = [wc.DEFAULT if c == "default" else bh.parse_config(c) for c in args.configs]
    t = time.time()
    n = bh.prewarm(cfgs, kinds=tuple(args.kinds.split(",")), layouts=((True, False),) if args.layouts == "rr" else
                   ((True, False), (True, True), (False, False), (False, True)))
    print(f"prewarmed {n} sm90a builds in {time.time() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
