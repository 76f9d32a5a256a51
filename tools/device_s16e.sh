#!/usr/bin/env bash
# Session 16, run E (device tool, carry .whl): compute-sanitizer memcheck and racecheck on one
# stream-K GEMM with split tiles (tools/sanitize_streamk.py).
. tools/device-preamble.sh
timeout 120 python3 tools/sanitize_streamk.py || echo "plain rc=$?"
for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 tools/sanitize_streamk.py 2>&1 | grep -v Warning | tail -n 4
    echo "$tool rc=$? at ${SECONDS}s"
done
