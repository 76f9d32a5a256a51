#!/usr/bin/env bash
# Session 31, run A (device tool, carry .whl and _ab; _ab/old = `git archive ec125d7 nbkernels
# tools`, the session's start; perf-notes r29): layer_norm's moments in one pass.
# 1. Warm both trees' layer_norm kernels (one process per tree and dtype), beside the
#    layer_norm GPU tests of this tree (the new `firsts` cases among them).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops layer_norm, old and this tree alternated (ROUNDS, default 3).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_rows_op layer_norm 10
