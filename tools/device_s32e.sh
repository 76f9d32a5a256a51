#!/usr/bin/env bash
# Session 32, run E (device tool, kind nvidia-h100-x1, carry .whl): the final row code on an
# H100. The row benchmark in bf16 and f32 (with the copy of each size's own bytes),
# then the whole row GPU file in what time is left (its kernels compiled by the benchmark and
# the warm-up).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid
timeout 200 python3 -m nbkernels.rows.bench --dtypes bf16,f32 \
    --json "$out/rows_bench_h100.json" 2>&1 | grep -v Warning
gpu_tests ${TEST_S:-240} 200 t_rows.txt -n 14 tests/test_rows_gpu.py
echo "done at ${SECONDS}s"
