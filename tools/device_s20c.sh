#!/usr/bin/env bash
# Session 20, run C (device tool, carry .whl and ab_mid = this tree with the staged epilogue's
# stores back to the default cache policy): D's stores evict-first in L2 (st.global.cs,
# perf-notes s16). The key shapes on both trees, alternated twice; then DRAM and L2 counters
# of one launch at short K on this tree (ncu, a few metrics) beside cuBLAS.
. tools/device-preamble.sh
for round in 1 2; do
    for tree in mid new; do
        pp=$PYTHONPATH; [ $tree = mid ] && pp=$PWD/ab_mid:$PYTHONPATH
        PYTHONPATH=$pp timeout 150 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 \
            --no-triton --no-sm80 --json "${OUT:-/tmp}/ab_${tree}_$round.json" 2>&1 \
            | grep -v "^ *$" | tail -n 10 | sed "s/^/$tree$round /" | cut -c1-150
        echo "$tree $round at ${SECONDS}s"
    done
done
for tree in mid new; do
    pp=$PYTHONPATH; [ $tree = mid ] && pp=$PWD/ab_mid:$PYTHONPATH
    PYTHONPATH=$pp timeout 120 ncu --profile-from-start off --print-summary none \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
        python3 tools/profile_ncu.py gemm 8192x8192x1024 2>&1 | grep -E "^  [a-z_<]|duration|dram__|hit_rate" | cut -c1-100 | sed "s/^/$tree /"
done
echo "done at ${SECONDS}s"
