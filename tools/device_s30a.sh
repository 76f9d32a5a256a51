#!/usr/bin/env bash
# Session 30, run A (device tool, carry .whl and _ab; _ab/old = `git archive a0d76e7 nbkernels
# tools`, the session's start; perf-notes r26): softmax's exponent as one FMA.
# 1. Warm both trees' softmax kernels (one process per tree and dtype), beside the softmax
#    and stream GPU tests of the rows and the stream tests of the GEMM (this tree: the GEMM
#    replay now orders only its allocations on a given stream, as the row replays do).
# 2. tools/rows_ab_quick.py --ops softmax, old and this tree alternated (ROUNDS, default 3).
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
gpu_tests 300 250 t_rows.txt -n 8 tests/test_rows_gpu.py -k "softmax or stream"
gpu_tests 300 250 t_gemm.txt -n 4 tests/test_gemm_gpu.py tests/test_gemm_sm90a_gpu.py \
    tests/test_hopper_gpu.py -k "stream"
wait $pids
for f in "$out"/warm_*.txt; do echo "$(basename $f): $(grep -c '% of copy' $f) timed"; done
echo "warm-up done at ${SECONDS}s"
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
