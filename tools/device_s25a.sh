#!/usr/bin/env bash
# Session 25, run A (device tool, carry .whl): every looping layout of the row reductions on
# today's kernels (perf-notes r18), after one warm-up process per op and dtype fills the cache.
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax" "bf16 f32"
timeout ${SWEEP_S:-420} python3 tools/rows_layout_sweep.py --json "$out/sweep.json" 2>&1 \
    | grep -v Warning
echo "sweep done at ${SECONDS}s"
