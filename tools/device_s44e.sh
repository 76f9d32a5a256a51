#!/usr/bin/env bash
# Session 44, run E (device tool, carry .whl and _ab; _ab/base = `git archive c5688d1`, the
# session's start; perf-notes r35): the shared vectors as they stay.
# 1. This tree's layer_norm GPU tests and the named-barrier probe, beside a warm-up of both
#    trees' kernels.
# 2. compute-sanitizer memcheck, racecheck and synccheck on the layer_norm cases of
#    sanitize_rows.py.
# 3. tools/ln_vectors_cost.py: the session's start, this tree's automatic plan and this tree
#    with NBKERNELS_ROWS_LOOP=pairs, alternated twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
lnv_warm_and_test . _ab/base
SANITIZER_EXTRA=synccheck row_sanitizer layer_norm
lnv_rounds 2 base:_ab/base: auto:.: pairs:.:pairs
echo "done at ${SECONDS}s"
