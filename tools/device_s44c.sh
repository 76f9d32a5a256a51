#!/usr/bin/env bash
# Session 44, run C (device tool, carry .whl and _ab; _ab/old = `git archive 2e12160`, the
# shared vectors in lockstep; perf-notes r35): the row groups on named barriers.
# 1. Both trees' layer_norm kernels warmed by tools/ln_vectors_cost.py (one process per tree
#    and dtype), beside this tree's layer_norm GPU tests and the named-barrier probe.
# 2. compute-sanitizer memcheck, racecheck and synccheck on the layer_norm cases of
#    sanitize_rows.py.
# 3. tools/ln_vectors_cost.py, old and this tree alternated twice, then this tree with
#    blocks looping over the rows (NBKERNELS_ROWS_LOOP=1: the vectors staged once a block).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
lnv_warm_and_test . _ab/old
SANITIZER_EXTRA=synccheck row_sanitizer layer_norm
lnv_rounds 2 old:_ab/old: new:.:
lnv_rounds 1 loop:.:1
echo "done at ${SECONDS}s"
