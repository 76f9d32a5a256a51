#!/usr/bin/env bash
# Session 27 run H (measurement only): the small calls' wall time on today's host
# (tools/host_parts.py --calls, twice): gemm 128^3 bf16 repeat calls against issue
# #3's 10 us, rms_norm 1x4096 against issue #5's 1.5x an empty launch.
# Usage (device tool, carry .whl): bash tools/device_s27h.sh
. tools/device-preamble.sh  # environment, log, GPU
for round in 1 2; do
    echo "--- round $round"
    timeout 200 python3 tools/host_parts.py --calls 2>&1 | grep -v "^ *$" | head -40
done
echo "done at ${SECONDS}s"
