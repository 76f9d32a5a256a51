#!/usr/bin/env bash
# Session 43, run F (H200; carry .whl and _ab, where _ab/old = `git archive 85265f7`, the
# session's start): the split tail before and after this session's changes to it (32-bit
# schedule, slot per split tile, acquire/release hand-off, partial sums at immediate offsets),
# through the dispatch at the two shapes it splits, alternated twice, cuBLAS in every process.
. tools/device-preamble.sh
. tools/ab-lib.sh
SIZES=4096x11008x4096,2304x2304x8192
export AB_DTYPES=bf16
ab_warm_pair $SIZES
wait $ab_pair_pids
echo "warm at ${SECONDS}s"
ab_rounds $SIZES
echo "done at ${SECONDS}s"
