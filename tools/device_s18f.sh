#!/usr/bin/env bash
# Session 18, run F (device tool, carry .whl): after the review's clean-up, the split tail's
# unit loop reads the kernel's own ktiles and ntiles instead of computing them again. Its GPU
# tests (forced and dispatched, replays) and the default against the split tail on two shapes.
. tools/device-preamble.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py -k "streamk or split" 2>&1 | tail -n 3
echo "tests at ${SECONDS}s"
timeout 120 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16 --no-triton --no-sm80 \
    --shapes 4096x11008x4096,2304x2304x8192,4096x4096x4096 --configs 128x256x4 2>&1 | tail -n 3
echo "done at ${SECONDS}s"
