#!/usr/bin/env bash
# Session 30, run A (device tool, carry .whl and _ab; _ab/old = `git archive a0d76e7 nbkernels
# tools`, the session's start; perf-notes r26): softmax's exponent as one FMA.
# 1. Warm both trees' softmax kernels (one process per tree and dtype), beside the softmax
#    and stream GPU tests of the rows and the stream tests of the GEMM (this tree: the GEMM
#    replay now orders only its allocations on a given stream, as the row replays do).
# 2. tools/rows_ab_quick.py --ops softmax, old and this tree alternated (ROUNDS, default 3).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_rows_warm softmax
gpu_tests 300 250 t_rows.txt -n 8 tests/test_rows_gpu.py -k "softmax or stream"
gpu_tests 300 250 t_gemm.txt -n 4 tests/test_gemm_gpu.py tests/test_gemm_sm90a_gpu.py \
    tests/test_hopper_gpu.py -k "stream"
ab_rows_warm_wait
ab_rows_rounds softmax
