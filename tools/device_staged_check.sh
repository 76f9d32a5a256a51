#!/usr/bin/env bash
# Next step for the staged sm90a epilogue (not yet run; perf-notes s5): the whole sm90a GPU
# file, the 60 staged sweep cases included. Every kernel the sweep launches is built first, in
# parallel (every edit of nbkernels' sources invalidates the disk cache, and compiling inside
# the tests made session 6's runs 4-5 look like stalls), then the tests run with pytest's
# faulthandler dumping every thread's Python stack when a test runs past 150 s: a stall inside
# numba/ptxas is a build, one inside a synchronize or copy back is a kernel that does not finish.
# (One device call: 240 s of builds on 14 processes, then ~200 s of tests on the warm cache.)
. tools/device-preamble.sh  # environment, log, GPU
CFG=128x128x6,256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p
CFG=$CFG,128x256x4s,128x128x6s,256x128x4s,64x128x4s,64x256x5ps
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs "$CFG" \
    > "$out/prewarm90.txt" 2>&1
tail -n 1 "$out/prewarm90.txt"
timeout 330 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=150 \
    tests/test_gemm_sm90a_gpu.py > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(grep -E "passed|failed" "$out/t_sm90a.txt" | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|File \"" "$out/t_sm90a.txt" | head -30
