#!/usr/bin/env bash
# Session 44, run B (device tool, carry .whl and _ab; _ab/old = `git archive HEAD~1` of 2e12160, the
# tree before the shared vectors; perf-notes r35): 16-bit layer_norm's row groups sharing
# float32 vectors.
# 1. Both trees' layer_norm kernels warmed by tools/ln_vectors_cost.py (one process per tree
#    and dtype), beside this tree's layer_norm GPU tests (the bias16 and vecs32 cases new).
# 2. compute-sanitizer memcheck and racecheck on the layer_norm cases of sanitize_rows.py.
# 3. tools/ln_vectors_cost.py, old and this tree alternated twice (ln f32 is the change; the
#    other columns' kernels are the same code).
. tools/device-preamble.sh
. tools/device-pytest.sh
old=$(cd _ab/old && pwd)
pids=""
for d in bf16 f16; do
    timeout 300 python3 tools/ln_vectors_cost.py --dtypes $d --rounds 1 --reps 1 \
        > "$out/warm_new_$d.txt" 2>&1 &
    pids="$pids $!"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 300 \
        python3 tools/ln_vectors_cost.py --dtypes $d --rounds 1 --reps 1 \
        > "$out/warm_old_$d.txt" 2>&1) &
    pids="$pids $!"
done
gpu_tests 420 300 t_ln.txt -n 8 tests/test_rows_gpu.py -k layer_norm
wait $pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
row_sanitizer layer_norm
for r in 1 2; do
    echo "--- round $r: old"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 120 \
        python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 2>&1 | grep summary -A40)
    echo "--- round $r: new"
    timeout 120 python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 \
        > "$out/new$r.txt" 2>&1
    grep "ln f32" "$out/new$r.txt"; grep summary -A20 "$out/new$r.txt"
done
echo "done at ${SECONDS}s"
