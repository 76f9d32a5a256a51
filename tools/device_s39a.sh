#!/usr/bin/env bash
# Planned first run of the session after 38 (H200; carry .whl and _ab, where _ab/old =
# `git archive 1d3ba19` with today's nbkernels/matmul/bench.py copied in): session 38's committed
# form of the uniform A descriptor (the consumer's first tile row broadcast from lane 0; runs B-D
# measured the warpgroup index broadcast instead, perf-notes s21), which has run on no GPU.
#  1. old and new tree alternated twice, f16 and bf16 at the key shapes;
#  2. the new intrinsic's probe on the GPU;
#  3. compute-sanitizer memcheck and racecheck on the sm90a edge shapes, deferred stores and
#     split tail (tools/sanitize_gemm.py sm90a, sanitize_defer.py, sanitize_streamk.py).
# The sm90a GPU file whole is tools/device_s39b.sh (it needs most of a call by itself).
. tools/device-preamble.sh
. tools/ab-lib.sh
. tools/device-pytest.sh
OLD=$(ab_tree _ab/old)
pids=""
ab_warm "$OLD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES & pids="$pids $!"
ab_warm "$PWD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES & pids="$pids $!"
gpu_tests 120 110 t_probe.txt tests/test_intrinsics_gpu.py -k "broadcast or warp"
wait $pids
echo "warm at ${SECONDS}s"
for round in 1 2; do
    ab_bench "old_$round" "$OLD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES --reps 20
    ab_bench "new_$round" "$PWD" --dtypes f16,bf16 --sizes $AB_KEY_SIZES --reps 20
done
for s in "tools/sanitize_gemm.py sm90a" tools/sanitize_defer.py tools/sanitize_streamk.py; do
    echo "--- $s"
    for tool in memcheck racecheck; do
        # shellcheck disable=SC2086
        timeout 150 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
            python3 $s 2>&1 | grep -v Warning | tail -n 3
        echo "$tool rc=$? at ${SECONDS}s"
    done
done
echo "done at ${SECONDS}s"
