#!/usr/bin/env bash
# Session 28, run D (device tool, carry .whl): the whole row GPU file on the generated
# repeat-call replays (perf-notes h4); its tests call each op more than once a geometry.
. tools/device-preamble.sh
PYT="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=400"
timeout -s ABRT 540 $PYT -n 14 tests/test_rows_gpu.py > "$out/t_rows.txt" 2>&1
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' "$out/t_rows.txt" | tail -n 1)"
grep -h -E "^(FAILED|ERROR)|Timeout" "$out/t_rows.txt" | head -20
