#!/usr/bin/env bash
# Session 15, run K (device tool, carry .whl): the ring's stage and parity counted instead of
# divided (perf-notes s11): tiles with 3, 5 and 6 stages checked against float64 references,
# then timed against their 4-stage neighbours, bf16.
. tools/device-preamble.sh
timeout 200 python3 tools/tile_check.py 128x128x6p 64x256x5p 128x128x6 128x256x3 128x128x6pd2 2>&1 | tail -n 7
echo "check rc=$? at ${SECONDS}s"
timeout 330 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16 --no-triton --no-sm80 \
    --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x8192x1024 \
    --configs 128x128x6p,128x128x4p,64x256x5p,128x128x6,128x128x4,128x256x3 \
    --json "${OUT:-/tmp}/counted.json" 2>&1 | tail -n 4
echo "done at ${SECONDS}s"
