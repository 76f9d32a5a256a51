#!/usr/bin/env bash
# Session 21, run A (device tool, carry .whl): the deferred stores built into the kernel
# (WgmmaConfig.defer, perf-notes s18) against the default tile, cuBLAS in the same process:
# e1, e2, e3 on 3 stages, and e2 with the split tail, at short K, 4096^3, 2048^3 and the
# split-tail shape (each built first in parallel processes).
. tools/device-preamble.sh
CFGS=${CFGS:-128x256x4e2,128x256x4e1,128x256x3e3,128x256x4ke2}
timeout $((${BUDGET:-570} - SECONDS)) python3 -m nbkernels.matmul.bench_hopper --prewarm \
    --no-triton --no-sm80 --configs $CFGS \
    --shapes ${SHAPES:-8192x8192x1024,4096x4096x4096,2048x2048x2048,4096x11008x4096} \
    --json "${OUT:-/tmp}/a.json" 2>&1 | grep -E "prewarmed|cublas=|Error|error" | cut -c1-230
echo "bench rc=$? at ${SECONDS}s"
