#!/usr/bin/env bash
# The whole sm90a GPU file with the staged epilogue as the default (session 7), the 60 guarded
# sweep cases included. Every kernel the sweep launches is built first, in parallel (every edit
# of nbkernels' sources invalidates the disk cache, and compiling inside the tests made session
# 6's runs 4-5 look like stalls), then the tests run with pytest's faulthandler dumping every
# thread's Python stack when a test runs past 150 s: a stall inside numba/ptxas is a build, one
# inside a synchronize or copy back is a kernel that does not finish.
# (One device call: ~250 s of builds on 14 processes, then the tests on the warm cache.)
. tools/device-preamble.sh  # environment, log, GPU
CFG=256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p
CFG=$CFG,128x256x4g,128x128x6g,256x128x4g,256x128x4wg,64x128x4g,128x128x6pg,64x256x5pg
timeout 250 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs "$CFG" \
    > "$out/prewarm90.txt" 2>&1
tail -n 1 "$out/prewarm90.txt"
timeout 320 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=150 \
    --durations=10 tests/test_gemm_sm90a_gpu.py > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(grep -E "passed|failed" "$out/t_sm90a.txt" | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|File \"" "$out/t_sm90a.txt" | head -30
grep -A 12 "slowest" "$out/t_sm90a.txt"
