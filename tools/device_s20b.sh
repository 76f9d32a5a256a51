#!/usr/bin/env bash
# Session 20, run B (device tool, carry .whl and ab_old = git archive of the tree before the
# change, nbkernels only): the sm90a tile coordinates by multiplication (perf-notes s16).
# GPU checks of the walks the change touches (repeat calls, dispatch, split tail, clusters,
# ping-pong and many tiles per block), then the key shapes on both trees, alternated twice.
. tools/device-preamble.sh
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gemm_sm90a_gpu.py \
    -k "many_tiles or fused or dispatch or streamk or repeat or cluster_grid" 2>&1 | tail -n 3
echo "tests at ${SECONDS}s"
for round in 1 2; do
    for tree in old new; do
        pp=$PYTHONPATH; [ $tree = old ] && pp=$PWD/ab_old:$PYTHONPATH
        PYTHONPATH=$pp timeout 150 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 \
            --no-triton --no-sm80 --json "${OUT:-/tmp}/ab_${tree}_$round.json" 2>&1 \
            | grep -v "^ *$" | tail -n 11 | sed "s/^/$tree$round /"
        echo "$tree $round at ${SECONDS}s"
    done
done
