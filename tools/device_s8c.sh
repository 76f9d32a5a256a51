#!/usr/bin/env bash
# Session 8, run 3: (1) A/B of the repeat path on one host: the whole small calls of the tree
# before this session's change (ab_old/, `git archive 122e289 nbkernels`) and of this tree,
# alternated twice (perf-notes r9); (2) register caps on the row kernels on the GPU
# (tools/rows_regcap.py gpu, perf-notes r10): builds in parallel, then timed one cap at a time.
. tools/device-preamble.sh  # environment, log, GPU
pids=""
for cap in none 80 64; do
    timeout 250 python3 tools/rows_regcap.py gpu --cap $cap --build-only > "$out/b_$cap.txt" 2>&1 &
    pids="$pids $!"
done
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 250 python3 ../tools/host_parts.py --calls \
    > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
timeout 250 python3 tools/host_parts.py --calls > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
echo "builds done at ${SECONDS}s"; tail -n 2 "$out"/b_*.txt "$out"/warm_*.txt
for round in 1 2; do
    echo "--- round $round: before (122e289)"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 100 python3 ../tools/host_parts.py --calls)
    echo "--- round $round: this tree"
    timeout 100 python3 tools/host_parts.py --calls
done
echo "A/B done at ${SECONDS}s"
for cap in none 80 64; do
    timeout 120 python3 tools/rows_regcap.py gpu --cap $cap
done
echo "done at ${SECONDS}s"
