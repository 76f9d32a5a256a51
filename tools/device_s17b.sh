#!/usr/bin/env bash
# Session 17, run B (device tool, carry .whl): the split tail (WgmmaConfig.streamk, perf-notes
# s13): its GPU tests, compute-sanitizer on one split GEMM, then the default against 128x256x4k
# on the shapes whose last wave it splits (4096x11008x4096: 56 of 1376 tiles; 2304^2 and
# 3072x3072x8192: 30 of 162 and 12 of 144) and on key shapes it leaves alone (whole tiles only).
. tools/device-preamble.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py -k streamk 2>&1 | tail -n 5
echo "tests at ${SECONDS}s"
. tools/sanitize.sh tools/sanitize_streamk.py 120
timeout 260 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-triton --no-sm80 \
    --shapes 4096x11008x4096,2304x2304x8192,3072x3072x8192,4096x4096x4096,8192x8192x1024 \
    --configs 128x256x4k --json "${OUT:-/tmp}/tail.json" 2>&1 | tail -n 14
echo "done at ${SECONDS}s"
