#!/usr/bin/env bash
# Session 33, run D (after run C, whose fresh machine compiled the cases under the sanitizer
# and ran out of time): the sm90a edge cases of tools/sanitize_gemm.py built and run plainly
# first, then under compute-sanitizer memcheck (driver API error returns left out) and
# racecheck, on the by-value maps and the NumPy-free map cache.
. tools/device-preamble.sh
cases="sm90a sm90a/128x128x6p sm90a/128x256x4 sm90a/128x256x4c2 sm90a/256x128x4w"
timeout 150 python3 tools/sanitize_gemm.py $cases 2>&1 | tail -n 2
for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 \
        python3 tools/sanitize_gemm.py $cases 2>&1 | grep -v Warning | tail -n 3
    echo "$tool rc=$? at ${SECONDS}s"
done
