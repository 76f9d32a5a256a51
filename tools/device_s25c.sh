#!/usr/bin/env bash
# Session 25, run C (device tool, carry .whl; kind nvidia-h200): the per-row layout against
# the automatic plan on the H200, where sessions 5-8 chose the loops (perf-notes r18).
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax" "bf16 f32"
timeout ${SWEEP_S:-300} python3 tools/rows_layout_sweep.py --loops no \
    --shapes 65536x1024,32768x2048,32768x4096,8192x8192,4096x16384 \
    --json "$out/sweep_h200.json" 2>&1 | grep -v Warning
echo "sweep done at ${SECONDS}s"
