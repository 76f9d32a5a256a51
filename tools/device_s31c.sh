#!/usr/bin/env bash
# Session 31, run C (device tool, carry .whl and _ab; _ab/old = `git archive 2dca740 nbkernels
# tools`, layer_norm in one pass; perf-notes r31): layer_norm's next row staged early.
# 1. Warm both trees' layer_norm kernels (one process per tree and dtype), beside the
#    layer_norm GPU tests of this tree (the new `firsts` cases among them).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/rows_ab_quick.py --ops layer_norm, old and this tree alternated (ROUNDS, default 3),
#    each round then this tree's 16-bit layer_norm in blocks of 2, 4 and 8 rows (one buffer).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_after_round() {
    [ "$1" -le 2 ] || return 0
    timeout 150 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes bf16 --loops no \
        --rows-per-block yes --block-rows 2x1,4x1,8x1 --json "$out/sweep$1.json" 2>&1 \
        | grep -v "^ *$" | grep -v "^copy"
}
ab_rows_op layer_norm 10
