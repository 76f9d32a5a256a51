#!/usr/bin/env bash
# Session 29, run L (device tool, carry .whl; perf-notes r25): float32 layer_norm's blocks of
# four rows as its automatic plan at rows of 8192 (the sizes and 16384x8192), then the
# whole row GPU file.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 150 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes f32,bf16 --loops no \
    --shapes 8192x8192,16384x8192,32768x4096 --json "$out/l.json" 2>&1 | grep -v "^ *$" \
    | grep -v "^copy"
gpu_tests 400 300 t_rows.txt -n 14 tests/test_rows_gpu.py
echo "done at ${SECONDS}s"
