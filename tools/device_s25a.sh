#!/usr/bin/env bash
# Session 25, run A (device tool, carry .whl): every looping layout of the row reductions on
# today's kernels (perf-notes r18), after one warm-up process per op and dtype fills the cache.
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
timeout ${SWEEP_S:-420} python3 tools/rows_layout_sweep.py --json "$out/sweep.json" 2>&1 \
    | grep -v Warning
echo "sweep done at ${SECONDS}s"
