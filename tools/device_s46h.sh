#!/usr/bin/env bash
# Session 46, run H (H200; carry .whl; measurement only): the GEMM shapes against
# cuBLAS and Triton on this tree (its GEMM device code is session 43's), one bench_hopper
# process, both dtypes; JSON under $OUT/key.json.
. tools/device-preamble.sh
timeout 280 python3 -m nbkernels.matmul.bench_hopper --shapes key --no-sm80 \
    --json "$out/key.json" 2>&1 | grep -E "cublas=|rror" | cut -c1-250
echo "done at ${SECONDS}s"
