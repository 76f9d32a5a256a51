#!/usr/bin/env bash
# Session 44, run B (device tool, carry .whl and _ab; _ab/old = `git archive HEAD~1` of 2e12160,
# the tree before the shared vectors; perf-notes r35): 16-bit layer_norm's row groups sharing
# float32 vectors.
# 1. Both trees' layer_norm kernels warmed by tools/ln_vectors_cost.py (one process per tree
#    and dtype), beside this tree's layer_norm GPU tests (the bias16 and vecs32 cases new).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/ln_vectors_cost.py, old and this tree alternated twice (ln f32 is the change; the
#    other columns' kernels are the same code).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
lnv_warm . _ab/old
gpu_tests 420 300 t_ln.txt -n 8 tests/test_rows_gpu.py -k layer_norm
wait $lnv_pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
row_sanitizer layer_norm
lnv_rounds 2 old:_ab/old: new:.:
echo "done at ${SECONDS}s"
