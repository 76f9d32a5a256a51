#!/usr/bin/env bash
# Session 31, run C (device tool, carry .whl and _ab; _ab/old = `git archive 2dca740 nbkernels
# tools`, layer_norm in one pass; perf-notes r31): layer_norm's next row staged early.
# 1. Warm both trees' layer_norm kernels (one process per tree and dtype), beside the
#    layer_norm GPU tests of this tree (the new `firsts` cases among them).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops layer_norm, old and this tree alternated (ROUNDS, default 3),
#    each round then this tree's 16-bit layer_norm in blocks of 2, 4 and 8 rows (one buffer).
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
gpu_tests 300 250 t_rows.txt -n 10 tests/test_rows_gpu.py -k "layer_norm"
wait $pids
for f in "$out"/warm_*.txt; do echo "$(basename $f): $(grep -c '% of copy' $f) timed"; done
echo "warm-up done at ${SECONDS}s"
row_sanitizer layer_norm
for round in $(seq 1 ${ROUNDS:-3}); do
    echo "--- round $round: old"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 120 \
        python3 tools/rows_ab_quick.py --ops layer_norm --dtypes $dtypes \
        --json "$out/quick_old$round.json" 2>&1 | grep -v Warning | grep -v '^copy')
    echo "--- round $round: new"
    timeout 120 python3 tools/rows_ab_quick.py --ops layer_norm --dtypes $dtypes \
        --json "$out/quick_new$round.json" 2>&1 | grep -v Warning | grep -v '^copy'
    [ "$round" -le 2 ] && timeout 150 python3 tools/rows_layout_sweep.py --ops layer_norm \
        --dtypes bf16 --loops no --rows-per-block yes --block-rows 2x1,4x1,8x1 \
        --json "$out/sweep$round.json" 2>&1 | grep -v "^ *$" | grep -v "^copy"
done
python3 tools/rows_ab_summary.py "$out"
echo "done at ${SECONDS}s"
