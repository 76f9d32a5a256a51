#!/usr/bin/env bash
# Session 15, run B (device tool, carry .whl): k-tiles of wgmma in flight (perf-notes s10).
# Builds the depth-2/3 tiles, checks them on the GPU (simulator cases' shapes plus a sweep
# through the sm90a GPU file's random cases with a depth-2 ping-pong tile), then times them
# against the default, bf16, key shapes.
. tools/device-preamble.sh
cfgs=128x128x6p,128x128x6pd2,128x128x6pd3,64x256x5pd2,128x256x4d2
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs "$cfgs" 2>&1 | tail -n 3
echo "prewarm rc=$? at ${SECONDS}s"
timeout 150 python3 tools/tile_check.py 2>&1 | tail -n 12
echo "check rc=$? at ${SECONDS}s"
timeout 300 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16 --no-triton --no-sm80 \
    --configs "$cfgs" --json "${OUT:-/tmp}/depth.json" 2>&1 | tail -n 6
echo "done at ${SECONDS}s"
