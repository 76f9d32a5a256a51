#!/usr/bin/env bash
# Session 10, run 7: compute-sanitizer memcheck and racecheck on the row kernels' edge cases
# (tools/sanitize_rows.py), with layer_norm's 16-bit kernels at 64 elements a thread.
. tools/device-preamble.sh
. tools/sanitize.sh tools/sanitize_rows.py 300
