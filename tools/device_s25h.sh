#!/usr/bin/env bash
# Session 25, run H (device tool, carry .whl; H100 or H200): rows of 16384 (blocks of 512
# threads, outside the layout rule of perf-notes r18): the automatic plan, a block per row,
# blocks of 2 and 4 rows in row order.
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax" "bf16 f32"
timeout ${SWEEP_S:-300} python3 tools/rows_layout_sweep.py --loops no --rows-per-block yes \
    --shapes ${SHAPES:-4096x16384,16384x16384} --json "$out/sweep_16k.json" 2>&1 \
    | grep -v Warning
echo "sweep done at ${SECONDS}s"
