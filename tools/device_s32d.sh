#!/usr/bin/env bash
# Session 32, run D (device tool, carry .whl): the session's final row code (warp_sum and
# warp_max around lanes16_sum / lanes16_max). The whole row GPU file, then the row
# benchmark for rms_norm and layer_norm in f16 (run A had bf16 and f32).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/device-warm-rows.sh
warm_rows_bench
gpu_tests 330 280 t_rows.txt -n 14 tests/test_rows_gpu.py
timeout 100 python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm --dtypes f16 \
    --json "$out/rows_bench_f16.json" 2>&1 | grep -v Warning | tail -n 9
echo "done at ${SECONDS}s"
