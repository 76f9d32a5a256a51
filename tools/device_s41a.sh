#!/usr/bin/env bash
# Planned first run of the session after 40 (H200; carry .whl and _ab, where _ab/old =
# `git archive b99f073`, the last commit before the 32-bit tile walk, with today's
# tools/ab-lib.sh): the tile walk without 64-bit divisions (perf-notes s26), which has run
# on no GPU beyond session 40's smoke check.
#  1. old and new alternated twice at one tile a block (1536x2816x64) and at the key shapes
#     2048^3, 4096^3, 8192x8192x1024, bf16 and f16, cuBLAS in every process;
#  2. ncu's own duration (no clock lock) at 1536x2816x64 on both trees, without and with ncu's
#     cache flush.
# Then the sm90a GPU file on the new code: BUDGET=580 bash tools/device_s40b.sh 1, 2, 3.
. tools/device-preamble.sh
. tools/ab-lib.sh
ab_alternate 1536x2816x64,2048,4096,8192x8192x1024
for cache in none all; do
    ab_ncu_duration "$(ab_tree _ab/old)" old $cache 1536x2816x64
    ab_ncu_duration "$PWD" new $cache 1536x2816x64
done
echo "done at ${SECONDS}s"
