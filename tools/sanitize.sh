#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on a Python script that runs kernels (sourced
# environment: tools/device-preamble.sh). Usage: bash tools/sanitize.sh SCRIPT [SECONDS]
timeout 200 python3 "$1" || echo "plain rc=$?"
for tool in memcheck racecheck; do
    timeout "${2:-300}" compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 "$1" 2>&1 | grep -v Warning | tail -n 4
    echo "$tool rc=$? at ${SECONDS}s"
done
