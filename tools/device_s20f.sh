#!/usr/bin/env bash
# Session 20, run F (device tool, carry .whl), in two calls on one warm machine: the final
# tree (the staged epilogue's stores evict-first). Part 1: the new intrinsic's GPU probe, then
# the sm90a random sweep; part 2: the rest of the sm90a GPU file (session 15's run D script).
# Usage: bash tools/device_s20f.sh 1|2
. tools/device-preamble.sh
if [ "$1" = 1 ]; then
    timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_intrinsics_gpu.py \
        -k vector_and_addresses 2>&1 | tail -n 1
    echo "probe at ${SECONDS}s"
fi
BUDGET=$((560 - SECONDS)) bash tools/device_s15d.sh "$1" ,128x256x4k
