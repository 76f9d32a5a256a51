#!/usr/bin/env bash
# Session 42, run F (H200; carry .whl and _ab, where _ab/old = `git archive 5bd1b3e`, the tile
# walk's kernels with the old parameter order): the prologue's scalars moved next to the maps
# (perf-notes s28; one 64-byte parameter line instead of three).
#  1. tools/smoke_sm90a.py on the new order (batched operands, alpha, edge tiles, each case
#     called again on fresh operands with another alpha, through the repeat path where it
#     takes the call), while both trees compile;
#  2. old and new alternated twice, bf16 at one k-tile (1536x2816x64) and 4096^3, cuBLAS in
#     every process; ncu's own duration at one k-tile on both trees, no cache flush.
. tools/device-preamble.sh
. tools/ab-lib.sh
OLD=$(ab_tree _ab/old)
SIZES=1536x2816x64,4096
export AB_DTYPES=bf16
ab_warm_pair $SIZES
timeout 150 python3 tools/smoke_sm90a.py 2>&1 | tail -n 12
echo "smoke rc=$? at ${SECONDS}s"
wait $ab_pair_pids
echo "warm at ${SECONDS}s"
ab_rounds $SIZES
ab_ncu_duration "$OLD" old none 1536x2816x64
ab_ncu_duration "$PWD" new none 1536x2816x64
echo "done at ${SECONDS}s"
