#!/usr/bin/env bash
# Session 32, run C (device tool, carry .whl; measurement only, perf-notes r34): what
# layer_norm's weight and bias cost a row in 16 bits on the H200 (tools/ln_vectors_cost.py),
# its kernels without vectors compiled first (one process per dtype).
. tools/device-preamble.sh
pids=""
for d in bf16 f16; do
    timeout 250 python3 tools/ln_vectors_cost.py --dtypes $d --rounds 1 --reps 1 \
        > "$out/warm_$d.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
timeout 300 python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 3 2>&1 | grep -v Warning
echo "done at ${SECONDS}s"
