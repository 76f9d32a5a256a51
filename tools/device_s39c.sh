#!/usr/bin/env bash
# Planned third run of the session after 38 (H200; carry .whl; measurement only, perf-notes s21):
# the sm90a tiles and schedules again now that the k-loop issues its HGMMAs without R2UR (the
# last sweeps, s7, s10, s20, ran on the k-loop with six): depth 2, three stages, ping-pong,
# rasterization groups of 16, clusters of two and the untimed 192x192 tile, beside the
# default (128x256x4e2), cuBLAS and Triton, bf16 and f16 at the key shapes, two passes each.
# A tile 1% or more above the default at three shapes in both types is a lead to confirm in a
# second process.
. tools/device-preamble.sh
timeout 300 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 128x256x4d2e2,128x256x3e2,128x128x6p,128x256x4r16e2,128x256x4c2,192x192x3 > /dev/null 2>&1
echo "prewarmed at ${SECONDS}s"
timeout 280 python3 -m nbkernels.matmul.bench_hopper --no-sm80 --json "$out/tiles.json" \
    --configs 128x256x4d2e2,128x256x3e2,128x128x6p,128x256x4r16e2,128x256x4c2,192x192x3 2>&1 |
    grep -v Warning | tail -n 30
echo "done at ${SECONDS}s"
