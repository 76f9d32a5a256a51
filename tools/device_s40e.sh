#!/usr/bin/env bash
# Session 40, run E (H200; carry .whl and _ab, _ab/old = `git archive` of the commit before the
# alpha branch): the staged epilogue without its 128 FMUL when alpha == 1 (perf-notes s25).
# Old and new alternated twice at one round of tiles (1536x2816, K = 64 and 512) and at 4096^3
# and 8192x8192x1024, bf16 and f16, cuBLAS in every process; then ncu's own duration (no cache
# flush, no clock lock) of the new tree at K = 64 beside cuBLAS (run D: 8.0 against 5.86 us).
. tools/device-preamble.sh
. tools/ab-lib.sh
OLD=$(ab_tree _ab/old)
SZ=1536x2816x64,1536x2816x512,4096,8192x8192x1024
pids=""
ab_warm "$OLD" --dtypes bf16,f16 --sizes $SZ & pids="$pids $!"
ab_warm "$PWD" --dtypes bf16,f16 --sizes $SZ & pids="$pids $!"
wait $pids
echo "warm at ${SECONDS}s"
for round in 1 2; do
    ab_bench "old_$round" "$OLD" --dtypes bf16,f16 --sizes $SZ --reps 30
    ab_bench "new_$round" "$PWD" --dtypes bf16,f16 --sizes $SZ --reps 30
done
for k in 64 512; do
    timeout 100 ncu --profile-from-start off --cache-control none --clock-control none \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum --page raw --csv \
        python3 tools/profile_ncu.py gemm 1536x2816x$k 2> /dev/null | python3 -c "
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 5]
h = rows[0]
for d in rows[2:]:
    print('K=$k new', d[h.index('Kernel Name')][:30], *(f'{c}={d[h.index(c)]}' for c in h if c.startswith(('gpu__', 'smsp__'))))"
done
echo "done at ${SECONDS}s"
