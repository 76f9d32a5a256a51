#!/usr/bin/env bash
# Session 25, run E (device tool, carry .whl; the H100 warm after run D): the whole row GPU
# file under pytest-xdist on the per-row rule (perf-notes r18).
. tools/device-preamble.sh
python3 -c "import xdist" 2>/dev/null && par="-n ${WORKERS:-10}" || par=""
echo "pytest-xdist: ${par:-absent}"
timeout ${TEST_S:-540} python3 -m pytest -q -p no:cacheprovider $par tests/test_rows_gpu.py \
    > "$out/tests.txt" 2>&1
echo "tests rc=$? at ${SECONDS}s"
tail -n 3 "$out/tests.txt"; grep -E "^(FAILED|ERROR)" "$out/tests.txt" | head -20
