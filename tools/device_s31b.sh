#!/usr/bin/env bash
# Session 31, run B (device tool, carry .whl and _ab; _ab/old = `git archive ec125d7 nbkernels
# tools`, the session's start; perf-notes r30): softmax at one barrier a row.
# 1. Warm both trees' softmax kernels (one process per tree and dtype), beside the
#    softmax GPU tests of this tree.
# 2. compute-sanitizer memcheck and racecheck on the softmax cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops softmax, old and this tree alternated (ROUNDS, default 3).
. tools/device-preamble.sh
. tools/device-pytest.sh
dtypes=${DTYPES:-bf16,f16,f32}
old=$(cd _ab/old && pwd)
W="tools/rows_ab_quick.py --ops softmax --reps 1"
pids=""
for d in ${dtypes//,/ }; do
    timeout 300 python3 $W --dtypes $d > "$out/warm_new_$d.txt" 2>&1 &
    pids="$pids $!"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 300 \
        python3 $W --dtypes $d > "$out/warm_old_$d.txt" 2>&1) &
    pids="$pids $!"
done
gpu_tests 300 250 t_rows.txt -n 10 tests/test_rows_gpu.py -k "softmax"
wait $pids
for f in "$out"/warm_*.txt; do echo "$(basename $f): $(grep -c '% of copy' $f) timed"; done
echo "warm-up done at ${SECONDS}s"
row_sanitizer softmax
for round in $(seq 1 ${ROUNDS:-3}); do
    echo "--- round $round: old"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 120 \
        python3 tools/rows_ab_quick.py --ops softmax --dtypes $dtypes \
        --json "$out/quick_old$round.json" 2>&1 | grep -v Warning | grep -v '^copy')
    echo "--- round $round: new"
    timeout 120 python3 tools/rows_ab_quick.py --ops softmax --dtypes $dtypes \
        --json "$out/quick_new$round.json" 2>&1 | grep -v Warning | grep -v '^copy'
done
python3 tools/rows_ab_summary.py "$out"
echo "done at ${SECONDS}s"
