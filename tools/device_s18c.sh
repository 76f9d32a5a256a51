#!/usr/bin/env bash
# Session 18, run C (device tool, carry .whl): the GPU tests of everything the repeat-call
# launcher (fast.Launcher, changed for the split tail) and the default sm90a dispatch (now
# with_split_tail) touch, on the final code: the sm80-class GEMM file but its random sweeps,
# then the sm90a file but its sweeps and cluster tiles (run B ran its split-tail tests).
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k,128x128x6 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 150 $T -n 8 tests/test_gemm_gpu.py -k "not random_sweep" > /tmp/t1.txt 2>&1
echo "sm80 file rc=$?: $(grep -E '[0-9]+ (passed|failed)' /tmp/t1.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/t1.txt | head -8
left=$((560 - SECONDS))
timeout -s ABRT $left $T -n 8 tests/test_gemm_sm90a_gpu.py \
    -k "not random_sweep and not cluster and not offload" > /tmp/t2.txt 2>&1
echo "sm90a file rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t2.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t2.txt | head -12
cp /tmp/t1.txt /tmp/t2.txt "${OUT:-/tmp}/"
