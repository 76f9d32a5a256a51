#!/usr/bin/env bash
# Session 29, run J (device tool, carry .whl): the row benchmark for layer_norm on the
# final code (16-bit one-buffer pairs, float32 pairs at 128 threads), bf16, f16 and float32.
. tools/device-preamble.sh
timeout 300 python3 -m nbkernels.rows.bench --ops layer_norm --dtypes bf16,f16,f32 \
    --json "$out/rows_bench_ln.json" 2>&1 | grep -v Warning
echo "bench done at ${SECONDS}s"
