#!/usr/bin/env bash
# Session 43, run D (H200; carry .whl): the pieces form after run C's profile (perf-notes
# s29): the partial sums stored and read at immediate offsets from one address a thread (1170
# instructions a piece were ~9 an element), pieces sized for a hand-off of 3 k-tiles.
#  1. the default tile and 128x256x4ke2 built in parallel (bf16, f16);
#  2. both beside cuBLAS in one bench process at 4096^3, 8192x8192x1024 and 8192^3, twice;
#  3. ncu's own durations (no flush, no clock lock) of the default, 128x256x4ke2 and cuBLAS at
#     4096^3 bf16.
. tools/device-preamble.sh
. tools/config-pair.sh
config_pair 128x256x4ke2 4096,8192x8192x1024,8192 d 150
timeout 100 ncu --profile-from-start off --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
    python3 tools/profile_ncu.py gemm 4096 128x256x4ke2 2>&1 | grep -E "^\s+(gpu__|smsp__)|^  [a-z_0-9]+.*\(" \
    | sed -E 's/\(Array.*\) \(/(... (/' | head -12
echo "done at ${SECONDS}s"
