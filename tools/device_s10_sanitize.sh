#!/usr/bin/env bash
# Session 10, run 7: compute-sanitizer memcheck and racecheck on the row kernels' edge cases
# (tools/sanitize_rows.py), with layer_norm's 16-bit kernels at 64 elements a thread.
. tools/device-preamble.sh
timeout 200 python3 tools/sanitize_rows.py || echo "plain rc=$?"
for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 tools/sanitize_rows.py 2>&1 | grep -v Warning | tail -n 4
    echo "$tool rc=$? at ${SECONDS}s"
done
