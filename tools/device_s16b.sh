#!/usr/bin/env bash
# Session 16, run B (device tool, carry .whl): stream-K over the last wave (perf-notes s12):
# the GPU tests of split tiles, then the default against 128x256x4k on the key shapes.
. tools/device-preamble.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 200 python3 -m pytest -q tests/test_gemm_sm90a_gpu.py -k streamk 2>&1 | tail -n 5
echo "tests at ${SECONDS}s"
timeout 230 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-triton --no-sm80 \
    --shapes 4096x4096x4096,8192x8192x8192,4096x11008x4096,8192x8192x1024,2048x2048x2048 \
    --configs 128x256x4k --json "${OUT:-/tmp}/sk.json" 2>&1 | tail -n 12
echo "done at ${SECONDS}s"
