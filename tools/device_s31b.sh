#!/usr/bin/env bash
# Session 31, run B (device tool, carry .whl and _ab; _ab/old = `git archive ec125d7 nbkernels
# tools`, the session's start; perf-notes r30): softmax at one barrier a row.
# 1. Warm both trees' softmax kernels (one process per tree and dtype), beside the
#    softmax GPU tests of this tree.
# 2. compute-sanitizer memcheck and racecheck on the softmax cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops softmax, old and this tree alternated (ROUNDS, default 3).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_rows_op softmax 10
