#!/usr/bin/env bash
# Session 44, run E (device tool, carry .whl and _ab; _ab/base = `git archive c5688d1`, the
# session's start; perf-notes r35): the shared vectors as they stay.
# 1. This tree's layer_norm GPU tests and the named-barrier probe, beside a warm-up of both
#    trees' kernels.
# 2. compute-sanitizer memcheck, racecheck and synccheck on the layer_norm cases of
#    sanitize_rows.py (synccheck's first error lines printed).
# 3. tools/ln_vectors_cost.py: the session's start, this tree's automatic plan and this tree
#    with NBKERNELS_ROWS_LOOP=pairs, alternated twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
base=$(cd _ab/base && pwd)
pids=""
for d in bf16 f16; do
    timeout 300 python3 tools/ln_vectors_cost.py --dtypes $d --rounds 1 --reps 1 \
        > "$out/warm_$d.txt" 2>&1 &
    pids="$pids $!"
    (cd "$base" && PYTHONPATH=/tmp/site:$base NBKERNELS_CACHE_DIR=$base/.nbk_cache timeout 300 \
        python3 tools/ln_vectors_cost.py --dtypes $d --rounds 1 --reps 1 \
        > "$out/warm_base_$d.txt" 2>&1) &
    pids="$pids $!"
done
gpu_tests 420 300 t_ln.txt -n 8 tests/test_rows_gpu.py tests/test_intrinsics_gpu.py \
    -k "layer_norm or named_barriers"
wait $pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s"
SANITIZER_EXTRA=synccheck row_sanitizer layer_norm
for r in 1 2; do
    echo "--- round $r: base"
    (cd "$base" && PYTHONPATH=/tmp/site:$base NBKERNELS_CACHE_DIR=$base/.nbk_cache timeout 120 \
        python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 > "$out/base$r.txt" 2>&1)
    grep "ln f32\|ln w+b" "$out/base$r.txt" | head -8
    for mode in auto pairs; do
        echo "--- round $r: $mode"
        if [ $mode = pairs ]; then export NBKERNELS_ROWS_LOOP=pairs; fi
        timeout 120 python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 \
            > "$out/${mode}$r.txt" 2>&1
        unset NBKERNELS_ROWS_LOOP
        grep "ln f32\|ln w+b" "$out/${mode}$r.txt" | head -8
    done
done
echo "done at ${SECONDS}s"
