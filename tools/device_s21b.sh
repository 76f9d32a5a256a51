#!/usr/bin/env bash
# Session 21, run B (device tool, carry .whl and ab_old = session 20's tree with its tools):
# why the built-in deferred stores (run A, +1.1-1.5% at short K) gained less than session 20's
# experiment (+2.5%): the experiment on the old tree, the new default and e2, and e2 with the
# experiment's warp barrier after each chunk's stores, alternated twice, one process each.
. tools/device-preamble.sh
S=--shapes=${SHAPES:-8192x8192x1024}
B="--dtypes bfloat16,float16 --no-triton --no-sm80 $S"
for round in 1 2; do
    PYTHONPATH=$PWD/ab_old:$PYTHONPATH timeout 200 python3 ab_old/tools/epilogue_defer.py $B 2>&1 \
        | grep -E "cublas=" | cut -c1-120 | sed "s/^/old-exp$round /"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper $B --configs 128x256x4e2 2>&1 \
        | grep -E "cublas=" | cut -c1-120 | sed "s/^/new$round /"
    timeout 200 python3 tools/defer_barrier.py $B --configs 128x256x4e2 2>&1 \
        | grep -E "cublas=" | cut -c1-120 | sed "s/^/barrier$round /"
    echo "round $round at ${SECONDS}s"
done
