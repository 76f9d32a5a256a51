#!/usr/bin/env bash
# Session 44, run D (device tool, carry .whl and _ab; _ab/base = `git archive c5688d1`, the
# session's start; perf-notes r35): the shared vectors staged by two groups, blocks looping.
# 1. This tree's layer_norm GPU tests and the named-barrier probe, beside a warm-up.
# 2. compute-sanitizer synccheck on the layer_norm cases of sanitize_rows.py in the session's
#    start (run C's synccheck reported 128 errors on this tree: are they new?), then
#    memcheck, racecheck and synccheck on this tree, the first errors printed.
# 3. tools/ln_vectors_cost.py: this tree's automatic plan and NBKERNELS_ROWS_LOOP=pairs,
#    alternated twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
base=$(ab_tree _ab/base)
lnv_warm_and_test .
sync_errors() {  # the first distinct error lines of compute-sanitizer synccheck
    timeout 200 compute-sanitizer --tool synccheck --report-api-errors no --print-limit 30 \
        python3 tools/sanitize_rows.py layer_norm > "$out/$1" 2>&1
    echo "synccheck ($1) rc=$? at ${SECONDS}s"
    grep -E "Barrier|barrier|Divergent|Invalid|ERROR SUMMARY|cases ok|at 0x|by thread" "$out/$1" \
        | sort | uniq -c | sort -rn | head -14
}
(cd "$base" && PYTHONPATH=/tmp/site:$base NBKERNELS_CACHE_DIR=$(ab_cache "$base") \
    sync_errors sync_base.txt)
sync_errors sync_new.txt
row_sanitizer layer_norm
lnv_rounds 2 auto:.: pairs:.:pairs
echo "done at ${SECONDS}s"
