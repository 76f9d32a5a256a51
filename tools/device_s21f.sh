#!/usr/bin/env bash
# Session 21, run F (device tool, carry .whl): compute-sanitizer memcheck and racecheck on the
# deferred stores at edge shapes (tools/sanitize_defer.py).
. tools/device-preamble.sh
. tools/sanitize.sh tools/sanitize_defer.py 400
