#!/usr/bin/env bash
# Session 31, run D (device tool, carry .whl): the session's final row code (layer_norm's
# moments in one pass, perf-notes r29). The whole row GPU file, then the row benchmark
# (every op, bf16 and f32; rms_norm and layer_norm in f16).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/device-warm-rows.sh
warm_rows_bench
gpu_tests 330 280 t_rows.txt -n 14 tests/test_rows_gpu.py
timeout ${BENCH_S:-200} python3 -m nbkernels.rows.bench --dtypes bf16,f32 \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
timeout 80 python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm --dtypes f16 \
    --json "$out/rows_bench_f16.json" 2>&1 | grep -v Warning | tail -n 8
echo "done at ${SECONDS}s"
