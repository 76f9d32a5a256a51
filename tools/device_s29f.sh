#!/usr/bin/env bash
# Session 29, run F (device tool, carry .whl; perf-notes s20, measurement only): the sm90a
# default against ping-pong, ping-pong in clusters of two, and 128x256 / 256x128 tiles in
# clusters of two, bf16 at the key shapes, cuBLAS and Triton in the same process.
. tools/device-preamble.sh
timeout 540 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16 --no-sm80 \
    --configs 128x128x6p,128x128x6pc2,128x256x4c2,256x128x4wc2 --json "$out/s29f.json" 2>&1 \
    | grep -E "cublas=|Error|rror:" | cut -c1-220
echo "done at ${SECONDS}s"
