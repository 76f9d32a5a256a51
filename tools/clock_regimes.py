"""How a GEMM's speed moves from the first milliseconds after idle to the sustained regime
(perf-notes t3): cuBLAS (torch.matmul), the sm80-class kernel (forced) and the mma.sync
ceiling, bf16 N^3, each run back to back for ``seconds`` after 2 s idle, every call timed with
CUDA events, the SM clock and board power sampled by nvidia-smi every 20 ms. Prints TFLOPS,
median SM clock and power per time window since the job's start.

    python3 tools/clock_regimes.py [N] [seconds]
"""
import statistics
import subprocess
import sys
import time

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16
from nbkernels.matmul.ceiling import Ceiling

WINDOWS = [(0, 0.05), (0.05, 0.2), (0.2, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 4.0)]


def run(name, fn, flop, seconds):
    fn()
    cupy.cuda.Device().synchronize()
    time.sleep(2.0)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "20"],
                           stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # nvidia-smi's own start
    t_wall0 = time.time()
    start = cupy.cuda.Event()
    start.record()
    events = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        e = cupy.cuda.Event()
        fn()
        e.record()
        events.append(e)
        if len(events) % 8 == 0:
            events[-8].synchronize()  # keep at most ~8 calls queued
    events[-1].synchronize()
    smi.terminate()
    lines = smi.communicate()[0].strip().splitlines()
    ends = [cupy.cuda.get_elapsed_time(start, e) * 1e-3 for e in events]
    samples = []
    for ln in lines:
        parts = [p.strip() for p in ln.split(",")]
        if len(parts) != 3:
            continue
        try:
            ts = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            ts += float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
            samples.append((ts - t_wall0, float(parts[1]), float(parts[2])))
        except ValueError:
            continue
    print(f"{name}: {len(events)} calls, {ends[-1]:.2f} s")
    prev = 0.0
    per_window = {w: [] for w in WINDOWS}
    for t in ends:
        for w in WINDOWS:
            if w[0] <= t < w[1]:
                per_window[w].append(t - prev)
        prev = t
    for w in WINDOWS:
        d = per_window[w]
        if not d:
            continue
        clk = [c for ts, c, _ in samples if w[0] <= ts < w[1]]
        pw = [p for ts, _, p in samples if w[0] <= ts < w[1]]
        print(f"  {w[0]:4.2f}-{w[1]:4.2f} s: {flop / statistics.median(d) / 1e12:6.1f} TFLOPS "
              f"({len(d)} calls)  SM {statistics.median(clk) if clk else float('nan'):6.0f} MHz  "
              f"{statistics.median(pw) if pw else float('nan'):5.0f} W", flush=True)


def main(argv):
    n = int(argv[0]) if argv else 8192
    seconds = float(argv[1]) if len(argv) > 1 else 3.0
    import torch

    rng = np.random.default_rng()
    a = cupy.asarray(rng.standard_normal((n, n)).astype(BF16))
    b = cupy.asarray(rng.standard_normal((n, n)).astype(BF16))
    out = cupy.empty((n, n), BF16)
    ta = torch.from_dlpack(a.view(cupy.int16)).view(torch.bfloat16)
    tb = torch.from_dlpack(b.view(cupy.int16)).view(torch.bfloat16)
    flop = 2.0 * n ** 3
    roof = Ceiling("bf16", flop)
    jobs = [("cuBLAS (torch.matmul)", lambda: torch.matmul(ta, tb)),
            ("nbkernels sm80", lambda: nbkernels.gemm(a, b, out=out, variant="sm80")),
            ("nbkernels default (sm90a)", lambda: nbkernels.gemm(a, b, out=out)),
            ("mma.sync ceiling", roof)]
    for name, fn in jobs:
        run(name, fn, roof.flops if fn is roof else flop, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
