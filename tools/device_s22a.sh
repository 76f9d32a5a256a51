#!/usr/bin/env bash
# Session 22, run A (device tool, carry .whl and ab_old = the session's starting tree's
# nbkernels): a tile's first k-step with scale_d = 0 instead of zeroed accumulators
# (perf-notes s19). The default on each tree, alternated three times, one process each,
# cuBLAS in every process.
. tools/device-preamble.sh
S=--shapes=${SHAPES:-8192x8192x1024,4096x4096x4096}
B="--dtypes bfloat16,float16 --no-triton --no-sm80 $S"
for round in 1 2 3; do
    PYTHONPATH=$PWD/ab_old:$PYTHONPATH timeout 200 python3 -m nbkernels.matmul.bench_hopper $B \
        2>&1 | grep -E "cublas=|Error" | cut -c1-150 | sed "s/^/old$round /"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper $B 2>&1 \
        | grep -E "cublas=|Error" | cut -c1-150 | sed "s/^/new$round /"
    echo "round $round at ${SECONDS}s"
done
