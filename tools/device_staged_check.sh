#!/usr/bin/env bash
# Next step for the staged sm90a epilogue (not yet run; perf-notes s5): the whole sm90a GPU
# file, the 60 staged sweep cases included, on a warm cache (every edit of nbkernels' sources
# invalidates it: build first, then test), with pytest's faulthandler dumping every thread's
# Python stack when a test runs past 150 s: a stall inside numba/ptxas is a build, one inside a
# synchronize or copy back is a kernel that does not finish.
. tools/device-preamble.sh  # environment, log, GPU
timeout 300 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4s \
    > "$out/prewarm90.txt" 2>&1
tail -n 1 "$out/prewarm90.txt"
timeout 560 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=150 \
    tests/test_gemm_sm90a_gpu.py > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(grep -E "passed|failed" "$out/t_sm90a.txt" | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|File \"" "$out/t_sm90a.txt" | head -30
