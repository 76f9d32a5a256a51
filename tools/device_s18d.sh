#!/usr/bin/env bash
# Session 18, run D (device tool, carry .whl): issue #4's report on the final code, H100: the
# key shapes (2048^3, 4096^3, 8192^3, 4096x11008x4096, 8192x8192x1024; bf16 and f16), the
# sm90a dispatch (split tail included where it applies) against cuBLAS (torch) and Triton's
# matmul, two passes each; JSON for docs/gemm_sm90a_h100_s18.json and the plot.
. tools/device-preamble.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 400 python3 -m nbkernels.matmul.bench_hopper --shapes key --no-sm80 \
    --json "${OUT:-/tmp}/key.json" 2>&1 | tail -n 12
echo "done at ${SECONDS}s"
