#!/usr/bin/env bash
# Session 29, run C (device tool, carry .whl; perf-notes r22): float32 layer_norm's pairs at
# 128 threads. The sweep (automatic plan against a block per row and blocks of 2 and 4 rows),
# rows.bench for layer_norm in float32 and bf16, the layer_norm cases under compute-sanitizer,
# then the whole row GPU file.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 150 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes f32 --loops no \
    --rows-per-block yes --json "$out/sweep_f32.json" 2>&1 | grep -v "^ *$" | tail -n 4
timeout 200 python3 -m nbkernels.rows.bench --ops layer_norm --dtypes f32,bf16 \
    --json "$out/bench_ln.json" 2>&1 | tail -n 12
row_sanitizer layer_norm
gpu_tests 400 300 t_rows.txt -n 14 tests/test_rows_gpu.py
echo "done at ${SECONDS}s"
