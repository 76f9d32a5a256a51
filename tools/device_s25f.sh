#!/usr/bin/env bash
# Session 25, run F (device tool, carry .whl; kind nvidia-h200, or the H100 with the same
# script): the automatic plan, a block per row, and blocks of 2 or 4 rows in row order
# (perf-notes r18).
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax" "bf16 f32"
timeout ${SWEEP_S:-300} python3 tools/rows_layout_sweep.py --loops no --rows-per-block yes \
    --shapes ${SHAPES:-32768x2048,32768x4096,8192x8192} --json "$out/sweep_k.json" 2>&1 \
    | grep -v Warning
echo "sweep done at ${SECONDS}s"
