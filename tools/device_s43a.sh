#!/usr/bin/env bash
# Session 43, run A (H200; carry .whl): the split tail's pieces form (perf-notes s29).
#  1. the default tile and 128x256x4ke2 (the split tail with the default's deferred stores)
#     built for bf16 and f16;
#  2. both beside cuBLAS in one bench process (the bench checks each result against cuBLAS's),
#     at 4096^3, 8192x8192x1024 and 8192^3, bf16 and f16; a second process the same.
. tools/device-preamble.sh
. tools/config-pair.sh
# (as run, the prewarm was inline Python read from stdin, which multiprocessing's spawn
# cannot re-import: it failed and the bench compiled in line)
config_pair 128x256x4ke2 4096,8192x8192x1024,8192 a 200
echo "done at ${SECONDS}s"
