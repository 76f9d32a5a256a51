#!/usr/bin/env bash
# Session 46, run E (H200; carry .whl and _ab; _ab/old = `git archive 4e6fa1d nbkernels tools`,
# the tree before perf-notes r40): the warps' partials in log2(warps) butterfly steps.
# 1. both trees' layer_norm, softmax and rms_norm kernels compiled (background), beside the
#    whole row GPU file on this tree;
# 2. tools/rows_ab_quick.py --ops layer_norm,softmax,rms_norm, old and new alternated.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16,f32
ab_rows_warm layer_norm,softmax,rms_norm
gpu_tests 200 190 t_rows.txt -n 12 tests/test_rows_gpu.py
ab_rows_warm_wait
ROUNDS=${ROUNDS:-2} ab_rows_rounds layer_norm,softmax,rms_norm
