#!/usr/bin/env bash
# Session 38 run C (H200; carry .whl and _ab as for run B): the warp-uniform warpgroup index's
# correctness on a GPU (the sm90a GEMM GPU file's 200-case random sweep, the deferred-store
# sweep, the split tail, fused epilogues, dispatch, clusters and persistent tiles), then f16
# and bf16 at the key shapes, old and new tree alternated twice (perf-notes s21).
. tools/device-preamble.sh
. tools/ab-lib.sh
. tools/device-pytest.sh
OLD=$(ab_tree _ab/old)
pids=""
gpu_tests 300 290 t_sm90a.txt -n 12 tests/test_gemm_sm90a_gpu.py -k "random_sweep_sm90a or deferred or streamk or fused or default_dispatch or many_tiles or cluster or splits_a_short" &
tp=$!
ab_warm "$OLD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES & pids="$pids $!"
ab_warm "$PWD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES & pids="$pids $!"
wait $pids
echo "warm at ${SECONDS}s"
wait $tp
for round in 1 2; do
    ab_bench "old_$round" "$OLD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES --reps 20
    ab_bench "new_$round" "$PWD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES --reps 20
done
echo "done at ${SECONDS}s"
