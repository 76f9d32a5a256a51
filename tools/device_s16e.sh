#!/usr/bin/env bash
# Session 16, run E (device tool, carry .whl): compute-sanitizer memcheck and racecheck on one
# stream-K GEMM with split tiles (tools/sanitize_streamk.py).
. tools/device-preamble.sh
. tools/sanitize.sh tools/sanitize_streamk.py 200
