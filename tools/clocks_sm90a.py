"""SM clock and power while a GEMM runs back to back: nbkernels' sm90a default against cuBLAS
(torch.matmul), bf16, for a few seconds each, sampled by nvidia-smi every 50 ms. Tests the idea
that part of the free-clock gap to cuBLAS (0.93x in the benchmark against 0.96x at ncu's locked
clock, session 7) is the clock the power limit leaves each kernel.

    python3 tools/clocks_sm90a.py [N] [seconds]
"""
import subprocess
import sys
import time

import torch

import nbkernels


def sampled(fn, seconds, flop):
    """(TFLOPS, median SM MHz, median W, samples) while ``fn`` runs back to back."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            fn()
        n += 10
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    smi.terminate()
    lines = smi.communicate()[0].strip().splitlines()
    vals = [tuple(float(x) for x in ln.split(",")) for ln in lines if ln.count(",") == 1]
    vals = vals[len(vals) // 5:]  # the ramp at the start
    mhz = sorted(v[0] for v in vals)
    watts = sorted(v[1] for v in vals)
    mid = len(vals) // 2
    return n * flop / dt / 1e12, mhz[mid], watts[mid], len(vals)


def main(argv):
    n = int(argv[0]) if argv else 8192
    seconds = float(argv[1]) if len(argv) > 1 else 4.0
    a = torch.randn(n, n, device="cuda").bfloat16()
    b = torch.randn(n, n, device="cuda").bfloat16()
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flop = 2.0 * n ** 3
    runs = {"nbkernels sm90a": lambda: nbkernels.gemm(a, b, out=out),
            "cuBLAS": lambda: torch.matmul(a, b, out=out)}
    report(f"{n}^3 bf16", runs, seconds, flop)


def report(label, runs, seconds, flop):
    """Each of ``runs`` (name -> call) sampled for ``seconds``, twice, alternating so that
    heat is shared out: TFLOPS, SM clock, power and TFLOPS per GHz."""
    for rnd in range(2):
        for name, fn in runs.items():
            tf, mhz, w, k = sampled(fn, seconds, flop)
            print(f"{label} {name:16s} round {rnd}: {tf:6.1f} TFLOPS  SM {mhz:6.0f} MHz  "
                  f"{w:5.0f} W  {tf / mhz * 1000:5.1f} TFLOPS/GHz  ({k} samples)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
