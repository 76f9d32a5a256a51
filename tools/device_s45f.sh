#!/usr/bin/env bash
# Session 45, run F (device tool, carry .whl; measurement only, perf-notes h10): what an
# output's allocation costs a small call, by the way CuPy and torch make it.
. tools/device-preamble.sh
timeout 150 python3 tools/alloc_costs.py 2>&1 | tail -40
echo "done at ${SECONDS}s"
