#!/usr/bin/env bash
# Session 10, run 4: run 3 found layer_norm bf16 8192^2 as fast on this tree as before r12 under
# Nsight Compute (one launch, caches flushed, clocks locked), while rows.bench has it 6 points
# of copy slower. Which condition matters: ncu with the GPU's own clocks and warm caches, and
# CUDA-event timing of 50 back-to-back launches on one input and rotated over 8 inputs, both
# trees (ab_old/: 4f6dba7).
. tools/device-preamble.sh
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
NCU="ncu --profile-from-start off --print-summary none --import-source no --section SpeedOfLight --clock-control none --cache-control none"
T='
import sys, statistics, cupy, torch, nbkernels
r = n = 8192
xs = [torch.randn(r, n, device="cuda").bfloat16() for _ in range(8)]
w = torch.randn(n, device="cuda").bfloat16(); b = torch.randn(n, device="cuda").bfloat16()
out = torch.empty_like(xs[0])
for op in ("layer_norm", "rms"):
    f = (lambda x: nbkernels.layer_norm(x, w, b, out=out)) if op == "layer_norm" else (lambda x: nbkernels.rms_norm(x, w, out=out))
    for name, sel in (("one", lambda i: xs[0]), ("rot8", lambda i: xs[i % 8])):
        for i in range(10): f(sel(i))
        torch.cuda.synchronize()
        ts = []
        for rep in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for i in range(50): f(sel(i))
            e.record(); e.synchronize(); ts.append(s.elapsed_time(e) * 1000 / 50)
        us = statistics.median(ts)
        print(f"{sys.argv[1]} {op:10s} {name:4s} {us:7.1f} us/call  {2 * r * n * 2 / us / 1e3:6.0f} GB/s")
'
for tree in old new; do
    pp=$PWD; [ $tree = old ] && pp=$PWD/ab_old
    PYTHONPATH=$pp:$PYTHONPATH timeout 120 python3 -c "$T" $tree 2>&1 | grep -v Warn
done
for tree in old new; do
    pp=$PWD; [ $tree = old ] && pp=$PWD/ab_old
    PYTHONPATH=$pp:$PYTHONPATH timeout 150 $NCU python3 tools/profile_ncu.py rows 8192 8192 layer_norm rms 2>&1 \
        | grep -E "^  [a-z_]+_kernel|Duration|DRAM Throughput|SM Frequency" | cut -c1-90 | sed "s/^/$tree /"
done
echo "done at ${SECONDS}s"
