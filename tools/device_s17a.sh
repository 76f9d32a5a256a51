#!/usr/bin/env bash
# Session 17, run A (device tool, carry .whl): where a small call's host time goes on a real
# host, piece by piece (tools/host_parts.py, twice), before the repeat path is cut down.
. tools/device-preamble.sh  # environment, log, GPU
for round in 1 2; do
    echo "--- round $round"
    timeout 240 python3 tools/host_parts.py 2>&1 | grep -v "^ *$" | head -60
done
echo "done at ${SECONDS}s"
