#!/usr/bin/env bash
# Session 21, run C (device tool, carry .whl): which deferred tile to make the default: e2 on
# 4 stages against 3 stages with e3 and e4 (3 stages without deferral as the control for the
# ring's depth), and the split tail on 3 stages with e3, cuBLAS in the same process.
. tools/device-preamble.sh
CFGS=128x256x4e2,128x256x3,128x256x3e3,128x256x3e4,128x256x3ke3
timeout $((${BUDGET:-570} - SECONDS)) python3 -m nbkernels.matmul.bench_hopper --prewarm \
    --no-triton --no-sm80 --configs $CFGS \
    --shapes ${SHAPES:-8192x8192x1024,4096x4096x4096,2048x2048x2048,4096x11008x4096,8192x8192x8192} \
    --json "${OUT:-/tmp}/c.json" 2>&1 | grep -E "prewarmed|cublas=|Error|error" | cut -c1-250
echo "bench rc=$? at ${SECONDS}s"
