#!/usr/bin/env bash
# Session 29, run I (device tool, carry .whl; perf-notes r24, r25): 16-bit layer_norm's one-buffer
# pairs as the automatic plan (bf16, f16; float32 beside), the same layouts measured for
# rms_norm and softmax in bf16 (their pairs have two buffers), then the whole row GPU file.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 200 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes bf16,f16,f32 \
    --loops no --rows-per-block yes --block-rows 2x1,4x1 --json "$out/ln.json" 2>&1 \
    | grep -v "^ *$" | grep -v "^copy"
timeout 200 python3 tools/rows_layout_sweep.py --ops rms_norm,softmax --dtypes bf16 \
    --loops no --rows-per-block yes --block-rows 2x1,4x1,2x2 --json "$out/rs.json" 2>&1 \
    | grep -v "^ *$" | grep -v "^copy"
gpu_tests 400 300 t_rows.txt -n 14 tests/test_rows_gpu.py
echo "done at ${SECONDS}s"
