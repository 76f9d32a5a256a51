#!/usr/bin/env bash
# Session 16, run A (device tool, carry .whl): the final tree of session 15 (consumers count
# the ring's stage, the producer divides) checked on the GPU, then ping-pong against the
# default at 2048^3, 4096^3 and short K, bf16 and f16, for the dispatch (perf-notes s11).
. tools/device-preamble.sh
timeout 170 python3 tools/tile_check.py 128x256x4 128x128x6p 64x256x5p 128x256x3 128x256x4c2 128x128x6pc2 2>&1 | tail -n 8
echo "check rc=$? at ${SECONDS}s"
timeout 150 python3 -m pytest -q -x tests/test_gemm_sm90a_gpu.py -k "test_random_sweep_sm90a and not guarded and not offloaded" 2>&1 | tail -n 3
echo "sweep at ${SECONDS}s"
timeout 250 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-triton --no-sm80 \
    --shapes 2048x2048x2048,8192x8192x1024,4096x4096x4096,4096x11008x4096 --configs 128x128x6p \
    --json "${OUT:-/tmp}/pp.json" 2>&1 | tail -n 12
echo "done at ${SECONDS}s"
