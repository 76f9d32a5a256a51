#!/usr/bin/env bash
# Session 40, run E (H200; carry .whl and _ab, _ab/old = `git archive` of the commit before the
# alpha branch): the staged epilogue without its 128 FMUL when alpha == 1 (perf-notes s25).
# Old and new alternated twice at one round of tiles (1536x2816, K = 64 and 512) and at 4096^3
# and 8192x8192x1024, bf16 and f16, cuBLAS in every process; then ncu's own duration (no cache
# flush, no clock lock) of the new tree at K = 64 and 512 beside cuBLAS (run D: 8.0 against
# 5.86 us at K = 64). (As run: the same steps written inline; folded into ab-lib.sh after.)
. tools/device-preamble.sh
. tools/ab-lib.sh
ab_alternate 1536x2816x64,1536x2816x512,4096,8192x8192x1024
for k in 64 512; do ab_ncu_duration "$PWD" new none 1536x2816x$k; done
echo "done at ${SECONDS}s"
