#!/usr/bin/env bash
# Planned first run of the session after 40 (H200; carry .whl and _ab, where _ab/old =
# `git archive` of the commit before the 32-bit tile walk, i.e. the alpha branch's f251df6 plus
# records): the tile walk without 64-bit divisions (perf-notes s26), which has run on no GPU
# beyond session 40's smoke check.
#  1. old and new alternated twice at one tile a block (1536x2816x64) and at the key shapes
#     2048^3, 4096^3, 8192x8192x1024, bf16 and f16, cuBLAS in every process;
#  2. ncu's own duration (no flush, no clock lock) at 1536x2816x64 on both trees, and with
#     ncu's flush on the new tree.
# Then the sm90a GPU file on the new code: BUDGET=580 bash tools/device_s40b.sh 1, 2, 3.
. tools/device-preamble.sh
. tools/ab-lib.sh
OLD=$(ab_tree _ab/old)
SZ=1536x2816x64,2048,4096,8192x8192x1024
pids=""
ab_warm "$OLD" --dtypes bf16,f16 --sizes $SZ & pids="$pids $!"
ab_warm "$PWD" --dtypes bf16,f16 --sizes $SZ & pids="$pids $!"
wait $pids
echo "warm at ${SECONDS}s"
for round in 1 2; do
    ab_bench "old_$round" "$OLD" --dtypes bf16,f16 --sizes $SZ --reps 30
    ab_bench "new_$round" "$PWD" --dtypes bf16,f16 --sizes $SZ --reps 30
done
ncu_k64() {  # tree label cache-control
    (cd "$1" && PYTHONPATH=/tmp/site:$1 timeout 100 ncu --profile-from-start off --cache-control "$3" \
        --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum --page raw --csv \
        python3 tools/profile_ncu.py gemm 1536x2816x64 2> /dev/null) | python3 -c "
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 5]
h = rows[0]
for d in rows[2:]:
    print('$2 cache=$3', d[h.index('Kernel Name')][:30], *(f'{c}={d[h.index(c)]}' for c in h if c.startswith(('gpu__', 'smsp__'))))"
}
ncu_k64 "$OLD" old none
ncu_k64 "$PWD" new none
ncu_k64 "$OLD" old all
ncu_k64 "$PWD" new all
echo "done at ${SECONDS}s"
