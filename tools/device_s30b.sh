#!/usr/bin/env bash
# Session 30, run B (device tool, carry .whl; perf-notes r27): rms_norm and softmax in 16 bits
# built with 64 elements a thread (NBKERNELS_EXP_PER_THREAD16=64, its own kernel cache) against
# today's 32, the automatic plan, a block per row and blocks of 2 / 4 rows, in alternate
# processes (ROUNDS, default 2). Then the softmax GPU tests of the default build (the new
# near1e4 and huge cases among them).
. tools/device-preamble.sh
. tools/device-pytest.sh
SW="tools/rows_layout_sweep.py --ops rms_norm,softmax --dtypes ${DTYPES:-bf16} --loops no
    --rows-per-block yes --block-rows 2x1,2x2,4x1"
pids=""
timeout 300 python3 tools/rows_ab_quick.py --ops rms_norm,softmax --dtypes ${DTYPES:-bf16} \
    --reps 1 > "$out/warm32.txt" 2>&1 &
pids="$pids $!"
NBKERNELS_EXP_PER_THREAD16=64 NBKERNELS_CACHE_DIR=$PWD/.nbk_cache64 timeout 300 python3 \
    tools/rows_ab_quick.py --ops rms_norm,softmax --dtypes ${DTYPES:-bf16} --reps 1 \
    > "$out/warm64.txt" 2>&1 &
pids="$pids $!"
gpu_tests 300 250 t_softmax.txt -n 12 tests/test_rows_gpu.py -k "softmax"
wait $pids
tail -n 4 "$out/warm32.txt" "$out/warm64.txt"
echo "warm-up done at ${SECONDS}s"
for round in $(seq 1 ${ROUNDS:-2}); do
    echo "--- round $round: 32 a thread"
    timeout 150 python3 $SW --json "$out/sw32_$round.json" 2>&1 | grep -v "^ *$" | grep -v "^copy"
    echo "--- round $round: 64 a thread"
    NBKERNELS_EXP_PER_THREAD16=64 NBKERNELS_CACHE_DIR=$PWD/.nbk_cache64 timeout 150 python3 $SW \
        --json "$out/sw64_$round.json" 2>&1 | grep -v "^ *$" | grep -v "^copy"
done
echo "done at ${SECONDS}s"
