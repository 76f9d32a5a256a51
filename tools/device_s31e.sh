#!/usr/bin/env bash
# Session 31, run E (device tool, an H100, carry .whl and _ab; _ab/old = `git archive ec125d7 nbkernels
# tools`, the session's start; perf-notes r29): layer_norm's one-pass moments on the H100.
# 1. Warm both trees' layer_norm kernels (one process per tree and dtype), beside the
#    layer_norm GPU tests of this tree (the new `firsts` cases among them).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops layer_norm, old and this tree alternated (ROUNDS, default 3).
. tools/device-preamble.sh
. tools/device-pytest.sh
dtypes=${DTYPES:-bf16,f16,f32}
old=$(cd _ab/old && pwd)
W="tools/rows_ab_quick.py --ops layer_norm --reps 1"
pids=""
for d in ${dtypes//,/ }; do
    timeout 300 python3 $W --dtypes $d > "$out/warm_new_$d.txt" 2>&1 &
    pids="$pids $!"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 300 \
        python3 $W --dtypes $d > "$out/warm_old_$d.txt" 2>&1) &
    pids="$pids $!"
done
gpu_tests 300 250 t_rows.txt -n 12 tests/test_rows_gpu.py -k "layer_norm"
wait $pids
for f in "$out"/warm_*.txt; do echo "$(basename $f): $(grep -c '% of copy' $f) timed"; done
echo "warm-up done at ${SECONDS}s"
row_sanitizer layer_norm
for round in $(seq 1 ${ROUNDS:-2}); do
    echo "--- round $round: old"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 120 \
        python3 tools/rows_ab_quick.py --ops layer_norm --dtypes $dtypes \
        --json "$out/quick_old$round.json" 2>&1 | grep -v Warning | grep -v '^copy')
    echo "--- round $round: new"
    timeout 120 python3 tools/rows_ab_quick.py --ops layer_norm --dtypes $dtypes \
        --json "$out/quick_new$round.json" 2>&1 | grep -v Warning | grep -v '^copy'
done
python3 tools/rows_ab_summary.py "$out"
echo "done at ${SECONDS}s"
