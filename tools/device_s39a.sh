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
export AB_DTYPES=f16,bf16 AB_REPS=20
ab_warm_pair $AB_KEY_SIZES
gpu_tests 120 110 t_probe.txt tests/test_intrinsics_gpu.py -k "broadcast or warp"
wait $ab_pair_pids
echo "warm at ${SECONDS}s"
ab_rounds $AB_KEY_SIZES
sanitizers 150 "tools/sanitize_gemm.py sm90a" tools/sanitize_defer.py tools/sanitize_streamk.py
echo "done at ${SECONDS}s"
