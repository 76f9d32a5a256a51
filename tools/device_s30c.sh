#!/usr/bin/env bash
# Session 30, run C (device tool, carry .whl; perf-notes r27): rms_norm's 64-element 16-bit
# build for rows of 4097-8192 and one-buffer pairs at rows of 4096 on the H200. The rms_norm
# cases of tools/sanitize_rows.py under memcheck and racecheck, the whole row GPU file, then
# the row benchmark (every op, bf16 and f32; rms_norm in f16).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid
timeout 200 python3 tools/rows_ab_quick.py --ops rms_norm --dtypes f16 --reps 1 > /dev/null 2>&1
echo "warm-up done at ${SECONDS}s"
row_sanitizer rms_norm
gpu_tests 330 280 t_rows.txt -n 14 tests/test_rows_gpu.py
timeout ${BENCH_S:-200} python3 -m nbkernels.rows.bench --dtypes bf16,f32 \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
timeout 60 python3 -m nbkernels.rows.bench --ops rms_norm --dtypes f16 \
    --json "$out/rows_bench_f16.json" 2>&1 | grep -v Warning | tail -n 4
echo "done at ${SECONDS}s"
