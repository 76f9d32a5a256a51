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
gpu_tests 420 300 t_ln.txt -n 8 tests/test_rows_gpu.py tests/test_intrinsics_gpu.py \
    -k "layer_norm or named_barriers"
wait $pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
SANITIZER_EXTRA=synccheck row_sanitizer layer_norm
for r in 1 2; do
    echo "--- round $r: old"
    (cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 120 \
        python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 > "$out/old$r.txt" 2>&1)
    grep summary -A20 "$out/old$r.txt" | grep "ln f32\|ln w+b"
    echo "--- round $r: new"
    timeout 120 python3 tools/ln_vectors_cost.py --dtypes bf16,f16 --rounds 1 \
        > "$out/new$r.txt" 2>&1
    grep "ln f32" "$out/new$r.txt" | head -4; grep summary -A20 "$out/new$r.txt"
done
echo "--- new, NBKERNELS_ROWS_LOOP=1"
NBKERNELS_ROWS_LOOP=1 timeout 120 python3 tools/ln_vectors_cost.py --dtypes bf16,f16 \
    --rounds 1 > "$out/loop.txt" 2>&1
grep "ln f32\|ln w+b" "$out/loop.txt" | head -8
echo "done at ${SECONDS}s"
