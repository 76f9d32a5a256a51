#!/usr/bin/env bash
# Session 25, run F (device tool, carry .whl; kind nvidia-h200, or the H100 with the same
# script): the automatic plan, a block per row, and blocks of 2 or 4 rows in row order
# (perf-notes r18).
. tools/device-preamble.sh
pids=""
for d in bf16 f32; do
    for op in rms_norm layer_norm softmax; do
        timeout 200 python3 tools/rows_ab_quick.py --ops $op --dtypes $d --reps 1 \
            > "$out/warm_${op}_$d.txt" 2>&1 &
        pids="$pids $!"
    done
done
wait $pids
echo "warm-up done at ${SECONDS}s"
timeout ${SWEEP_S:-300} python3 tools/rows_layout_sweep.py --loops no --rows-per-block yes \
    --shapes ${SHAPES:-32768x2048,32768x4096,8192x8192} --json "$out/sweep_k.json" 2>&1 \
    | grep -v Warning
echo "sweep done at ${SECONDS}s"
