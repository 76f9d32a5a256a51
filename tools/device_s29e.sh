#!/usr/bin/env bash
# Session 29, run E (device tool, carry .whl and _ab; perf-notes h5): the row ops' replay ahead
# of their stream frame. Small calls (tools/host_parts.py --calls) on the tree before (under
# _ab/old) and this one, alternated twice on one host; then the row GPU tests of replays,
# streams, threads and outputs meeting inputs.
. tools/device-preamble.sh
OLD=$(cd _ab/old && pwd)
calls() {  # calls DIR: host_parts --calls from DIR's own tree and kernel cache
    (cd "$1" && PYTHONPATH=/tmp/site:$1 NBKERNELS_CACHE_DIR=$1/.nbk_cache timeout 200 \
        python3 tools/host_parts.py --calls 2>&1 | grep -v "^ *$" | head -20)
}
for round in 1 2; do
    echo "--- old, round $round"; calls "$OLD"
    echo "--- new, round $round"; calls "$PWD"
done
echo "timed at ${SECONDS}s"
. tools/device-pytest.sh
gpu_tests 300 200 t.txt -n 12 tests/test_rows_gpu.py \
    -k "repeat or replay or stream or thread or sharing or shifted or place or overlap or torch"
echo "done at ${SECONDS}s"
