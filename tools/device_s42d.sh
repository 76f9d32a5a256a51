#!/usr/bin/env bash
# Session 42, run D (H200; carry .whl): the table and plot (TFLOPS, x cuBLAS, x Triton)
# on the 32-bit tile walk (d17f141's kernels): docs/gemm_sm90a_h200.png was session 7's.
# Two rounds of bench_hopper at the key shapes, both dtypes, Triton beside (key1.json,
# key2.json under $OUT; round 1 becomes docs/gemm_sm90a_h200_s42.json and the plot).
. tools/device-preamble.sh
for r in 1 2; do
    timeout 240 python3 -m nbkernels.matmul.bench_hopper --shapes key --no-sm80 \
        --json "$out/key$r.json" 2>&1 | grep -E "cublas=|rror" | cut -c1-250 | sed "s/^/$r /"
    echo "round $r done at ${SECONDS}s"
done
