#!/usr/bin/env bash
# Session 26 run B (perf-notes d6): the float64 k-loop schedules (tools/dmma_sched.py) at
# 2048^3 and 4096^3 on the default tile, cuBLAS DGEMM in each process; built in parallel
# first (one cache directory per schedule), then timed in two alternating rounds.
# Usage (device tool, carry .whl): bash tools/device_s26b.sh
. tools/device-preamble.sh  # environment, log, GPU
VARIANTS=('{}' '{"refill_piece": 1}' '{"refill_piece": 2}' '{"paired": 1, "refill_piece": 1}')
TILE="128,64,128,2,2,4,8,2"
i=0
pids=""
for v in "${VARIANTS[@]}"; do
    timeout 200 python3 tools/dmma_sched.py "$v" --dtypes f64 --sizes 2048 --tiles "$TILE" \
        --reps 3 > "$out/warm_$i.txt" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
done
wait $pids  # not a bare wait: it would wait for the log tee too
echo "built at ${SECONDS}s"; tail -q -n 2 "$out"/warm_*.txt
for round in 1 2; do
    i=0
    for v in "${VARIANTS[@]}"; do
        timeout 120 python3 tools/dmma_sched.py "$v" --dtypes f64 --sizes 2048,4096 \
            --tiles "$TILE" --json "$out/r${round}_$i.json" > "$out/r${round}_$i.txt" 2>&1
        echo "round $round variant $i ($v) rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/r${round}_$i.json'))
print('   ', '  '.join(f\"{r['m']}: {r['nbk_tflops']:.1f} / {r['cublas_tflops']:.1f} = {r['ratio']:.3f} (err {r['relerr']:.1e})\" for r in rows))"
        i=$((i + 1))
    done
done
echo "done at ${SECONDS}s"
