# Sourced by A/B device scripts after tools/device-preamble.sh (session 27): one bench process
# per (tree, configuration), each run from its own tree's directory (python -m puts the working
# directory first on sys.path: a tree run from another's directory imports the wrong package),
# with its own kernel cache, and one summary line per process.
#   ab_tree DIR        the absolute path of a tree unpacked under DIR (e.g. _ab/old), or of
#                      this checkout for "."
#   ab_bench LABEL DIR BENCH-ARGS...   bench rows under $out/LABEL.json, output $out/LABEL.txt
#   ab_warm DIR BENCH-ARGS...          compile only (background it; collect with wait $pids)
#   ab_small_calls LIMIT_S   tools/host_parts.py --calls on the tree under _ab/old and on this
#                            checkout, alternated twice (small calls, perf-notes h4, h5)
# gpu_tests, row_sanitizer and PADDED_ROW_TESTS (tools/device-pytest.sh), which ab_rows_op and
# ab_trees_around call: sourced here, so a device script sources the preamble and this file only
. tools/device-pytest.sh
ab_tree() { if [ "$1" = . ]; then echo "$PWD"; else echo "$PWD/$1"; fi; }

ab_cache() { if [ "$1" = "$PWD" ]; then echo "$NBKERNELS_CACHE_DIR"; else echo "$1/.nbk_cache"; fi; }

ab_bench() {
    local label=$1 dir=$2
    shift 2
    (cd "$dir" && PYTHONPATH=/tmp/site:$dir NBKERNELS_CACHE_DIR=$(ab_cache "$dir") timeout 240 \
        python3 -m nbkernels.matmul.bench "$@" --json "$out/$label.json" > "$out/$label.txt" 2>&1)
    local rc=$?
    python3 - "$out/$label.json" "$label" "$rc" "$SECONDS" <<'PY'
import json, sys
path, label, rc, t = sys.argv[1:]
try:
    rows = json.load(open(path))
except (OSError, ValueError):
    print(f"{label:24s} rc={rc} at {t}s: no rows")
    raise SystemExit
cells = "  ".join(f"{r['dtype']} {r['m']}x{r['n']}x{r['k']}: {r['nbk_tflops']:.1f}/{r['cublas_tflops']:.1f}"
                  f" = {r['ratio']:.3f} e{r['relerr']:.0e}" for r in rows)
print(f"{label:24s} rc={rc} at {t}s  {cells}  [{rows[0]['plan_tile']}]")
PY
}

ab_warm() {
    local dir=$1
    shift
    (cd "$dir" && PYTHONPATH=/tmp/site:$dir NBKERNELS_CACHE_DIR=$(ab_cache "$dir") timeout 300 \
        python3 -m nbkernels.matmul.bench "$@" --prewarm 1 --prewarm-only > /dev/null 2>&1)
}

ab_small_calls() {
    local limit=$1 old round dir
    old=$(cd _ab/old && pwd)
    for round in 1 2; do
        for dir in "$old" "$PWD"; do
            if [ "$dir" = "$old" ]; then echo "--- old, round $round"; else echo "--- new, round $round"; fi
            (cd "$dir" && PYTHONPATH=/tmp/site:$dir NBKERNELS_CACHE_DIR=$dir/.nbk_cache \
                timeout "$limit" python3 tools/host_parts.py --calls 2>&1 | grep -v "^ *$" | head -20)
        done
    done
}

# One row op, the tree under _ab/old against this checkout (sessions 30-31, perf-notes r26,
# r29-r31); DTYPES (default bf16,f16,f32), ROUNDS (default 3).
#   ab_rows_warm OP      both trees' OP kernels compiled, one background process per tree and
#                        dtype (their pids in ab_warm_pids); ab_rows_warm_wait waits for them
#   ab_rows_rounds OP    tools/rows_ab_quick.py --ops OP (and $AB_ROWS_ARGS), old and new
#                        alternated (both trees run this tree's tool when the caller copies it
#                        into _ab/old); after each
#                        round a function ab_after_round ROUND runs where the caller defined one
#   ab_rows_op OP TEST_N the three around this tree's OP GPU tests (pytest -n TEST_N -k OP) and
#                        compute-sanitizer on OP's cases of tools/sanitize_rows.py (session 31)
ab_rows_warm() { AB_TREES="old:_ab/old new:." ab_trees_warm "$1"; }

ab_rows_warm_wait() {
    local f
    wait $ab_warm_pids  # not a bare wait: it would wait for the log tee too
    for f in "$out"/warm_*.txt; do echo "$(basename $f): $(grep -c '% of copy' $f) timed"; done
    echo "warm-up done at ${SECONDS}s"
}

ab_rows_rounds() { AB_TREES="old:_ab/old new:." ROUNDS=${ROUNDS:-3} ab_trees_rounds "$1"; }

ab_rows_op() {
    ab_rows_warm "$1"
    gpu_tests 300 250 t_rows.txt -n "$2" tests/test_rows_gpu.py -k "$1"
    ab_rows_warm_wait
    row_sanitizer "$1"
    ab_rows_rounds "$1"
}

# The issue's key GEMM shapes, as matmul.bench's --sizes (session 38): squares, then the LLM ones.
AB_KEY_SIZES=2048,4096,8192,4096x11008x4096,8192x8192x1024

# Session 40: the A/B both GEMM scripts of the session ran (device_s40e.sh, device_s41a.sh).
#   ab_alternate SIZES         both trees' kernels compiled in parallel, then old and new
#                              alternated twice (labels old_1, new_1, ...); AB_DTYPES (default
#                              bf16,f16) and AB_REPS (default 30) as the caller sets them
#   ab_warm_pair SIZES         its first half, in the background (wait $ab_pair_pids; a script
#                              can run something else on the GPU meanwhile); ab_rounds SIZES
#                              its second half
#   ab_ncu_duration DIR LABEL CACHE SHAPE   ncu's own duration and instruction count of one
#                              launch of ours and cuBLAS's (tools/profile_ncu.py gemm SHAPE) in
#                              the tree DIR, no clock lock, --cache-control CACHE (none or all)
ab_alternate() {
    ab_warm_pair "$1"
    wait $ab_pair_pids
    echo "warm at ${SECONDS}s"
    ab_rounds "$1"
}

ab_warm_pair() {
    local old
    old=$(ab_tree _ab/old)
    ab_pair_pids=""
    ab_warm "$old" --dtypes "${AB_DTYPES:-bf16,f16}" --sizes "$1" & ab_pair_pids="$ab_pair_pids $!"
    ab_warm "$PWD" --dtypes "${AB_DTYPES:-bf16,f16}" --sizes "$1" & ab_pair_pids="$ab_pair_pids $!"
}

ab_rounds() {
    local old round
    old=$(ab_tree _ab/old)
    for round in 1 2; do
        ab_bench "old_$round" "$old" --dtypes "${AB_DTYPES:-bf16,f16}" --sizes "$1" --reps "${AB_REPS:-30}"
        ab_bench "new_$round" "$PWD" --dtypes "${AB_DTYPES:-bf16,f16}" --sizes "$1" --reps "${AB_REPS:-30}"
    done
}

ab_ncu_duration() {
    local dir=$1 label=$2 cache=$3 shape=$4
    (cd "$dir" && PYTHONPATH=/tmp/site:$dir timeout 100 ncu --profile-from-start off \
        --cache-control "$cache" --clock-control none \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum --page raw --csv \
        python3 tools/profile_ncu.py gemm "$shape" 2> /dev/null) | python3 -c "
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 5]
h = rows[0]
for d in rows[2:]:
    print('$label cache=$cache $shape', d[h.index('Kernel Name')][:30],
          *(f'{c}={d[h.index(c)]}' for c in h if c.startswith(('gpu__', 'smsp__'))))"
}

# Session 44 (perf-notes r35): tools/ln_vectors_cost.py (16-bit layer_norm's and rms_norm's
# vectors) in one or several trees.
#   lnv_in DIR LIMIT ARGS...   ln_vectors_cost.py ARGS in the tree DIR (ab_tree's), its own cache
#   lnv_warm DIR...            each tree's kernels compiled, one background process per tree and
#                              dtype (bf16, f16; pids in lnv_pids, output $out/warm_<tree>_<dtype>.txt)
#   lnv_round DIR FILE         one round of both dtypes in the tree DIR, output $out/FILE
lnv_in() {
    local dir limit=$2
    dir=$(ab_tree "$1")
    shift 2
    (cd "$dir" && PYTHONPATH=/tmp/site:$dir NBKERNELS_CACHE_DIR=$(ab_cache "$dir") \
        timeout "$limit" python3 tools/ln_vectors_cost.py "$@")
}

lnv_warm() {
    local t d
    lnv_pids=""
    for t in "$@"; do
        for d in bf16 f16; do
            lnv_in "$t" 300 --dtypes $d --rounds 1 --reps 1 \
                > "$out/warm_$(basename "$(ab_tree "$t")")_$d.txt" 2>&1 &
            lnv_pids="$lnv_pids $!"
        done
    done
}

lnv_round() { lnv_in "$1" 120 --dtypes bf16,f16 --rounds 1 > "$out/$2" 2>&1; }
#   lnv_rounds N SPEC...       N rounds, each running every SPEC in turn: "label:tree:loop" (loop:
#                              an NBKERNELS_ROWS_LOOP value, or empty for the automatic plan);
#                              output $out/<label><round>.txt, its ln f32 and ln w+b lines printed
lnv_rounds() {
    local n=$1 r spec label tree loop
    shift
    for r in $(seq 1 "$n"); do
        for spec in "$@"; do
            IFS=: read -r label tree loop <<< "$spec"
            echo "--- round $r: $label"
            NBKERNELS_ROWS_LOOP=$loop lnv_round "$tree" "$label$r.txt"
            grep "ln f32\|ln w+b" "$out/$label$r.txt" | head -8
        done
    done
}
#   lnv_warm_and_test DIR...   lnv_warm DIR..., beside this tree's layer_norm GPU tests and the
#                              named-barrier probe (gpu_tests), then
#                              the warm-up waited for
lnv_warm_and_test() {
    lnv_warm "$@"
    gpu_tests 420 300 t_ln.txt -n 8 tests/test_rows_gpu.py tests/test_intrinsics_gpu.py \
        -k "layer_norm or named_barriers"
    wait $lnv_pids  # not a bare wait: it would wait for the log's tee too
    echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
}

# Session 49: more than two trees. AB_TREES="label:dir ..." (dir "." is this checkout; each
# other dir holds this tree's tools/rows_ab_quick.py, copied by the caller).
#   ab_trees_warm OPS     every tree's OPS kernels compiled, a background process per tree and
#                         dtype (wait with ab_rows_warm_wait)
#   ab_trees_rounds OPS   tools/rows_ab_quick.py --ops OPS ($DTYPES, $AB_ROWS_ARGS) in each tree
#                         in turn, ROUNDS (default 2) times (after each round ab_after_round
#                         ROUND where the caller defined one), then the summary table
# ab_rows_warm and ab_rows_rounds above are these with AB_TREES="old:_ab/old new:." (rounds
# default 3)
ab_tree_run() {
    local dir=$1
    shift
    if [ "$dir" = . ]; then
        "$@"
    else
        (cd "$dir" && PYTHONPATH=/tmp/site:$PWD NBKERNELS_CACHE_DIR=$PWD/.nbk_cache "$@")
    fi
}

ab_trees_warm() {
    local op=$1 dtypes=${DTYPES:-bf16,f16,f32} spec label dir d
    ab_warm_pids=""
    for spec in $AB_TREES; do
        label=${spec%%:*} dir=${spec#*:}
        for d in ${dtypes//,/ }; do
            ab_tree_run "$dir" timeout 300 python3 tools/rows_ab_quick.py --ops $op --reps 1 \
                --dtypes $d ${AB_ROWS_ARGS:-} > "$out/warm_${label}_$d.txt" 2>&1 &
            ab_warm_pids="$ab_warm_pids $!"
        done
    done
}

ab_trees_rounds() {
    local op=$1 dtypes=${DTYPES:-bf16,f16,f32} spec label dir round
    for round in $(seq 1 ${ROUNDS:-2}); do
        for spec in $AB_TREES; do
            label=${spec%%:*} dir=${spec#*:}
            echo "--- round $round: $label"
            ab_tree_run "$dir" timeout 120 python3 tools/rows_ab_quick.py --ops $op \
                --dtypes $dtypes ${AB_ROWS_ARGS:-} --json "$out/quick_$label$round.json" 2>&1 \
                | grep -v Warning | grep -v '^copy'
        done
        if declare -F ab_after_round > /dev/null; then ab_after_round "$round"; fi
    done
    python3 tools/rows_ab_summary.py "$out"
    echo "done at ${SECONDS}s"
}

# ab_trees OPS: ab_trees_warm, ab_rows_warm_wait and ab_trees_rounds in turn (a run that puts
# nothing on the GPU while the trees compile)
ab_trees() {
    ab_trees_warm "$1"
    ab_rows_warm_wait
    ab_trees_rounds "$1"
}

# Session 50: ab_trees_around OPS GPU_TEST_ARGS...: every tree's OPS kernels compiled
# (ab_trees_warm) while gpu_tests GPU_TEST_ARGS (LIMIT FAULT FILE PYTEST-ARGS...) runs on
# this tree, then ROUNDS (default 2) alternated rounds
# (ab_trees_rounds)
ab_trees_around() {
    local ops=$1
    shift
    ab_trees_warm "$ops"
    gpu_tests "$@"
    ab_rows_warm_wait
    ROUNDS=${ROUNDS:-2} ab_trees_rounds "$ops"
}
