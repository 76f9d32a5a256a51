#!/usr/bin/env bash
# Session 38 run B (H200; carry .whl and _ab; _ab/old = `git archive 1d3ba19`, the tree before the
# warp-uniform warpgroup index, with today's bench.py so that it takes MxNxK sizes): the sm90a
# GEMM with its consumers' descriptors on the uniform datapath (0 R2UR in the k-loop, from 6)
# against the tree before it, bf16 at the key shapes, the trees alternated twice, one
# process each, cuBLAS in every process (perf-notes s21). Then the sm90a GPU tests on the new tree.
. tools/device-preamble.sh
. tools/ab-lib.sh
. tools/device-pytest.sh
AB_DTYPES=bf16 AB_REPS=20 ab_alternate $AB_KEY_SIZES
gpu_tests 200 190 t_sm90a.txt -n 8 tests/test_gemm_sm90a_gpu.py tests/test_hopper_gpu.py
echo "done at ${SECONDS}s"
