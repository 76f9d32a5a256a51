#!/usr/bin/env bash
# Session 29, run E (device tool, carry .whl and _ab; perf-notes h5): the row ops' replay ahead
# of their stream frame. Small calls (tools/host_parts.py --calls) on the tree before (under
# _ab/old) and this one, alternated twice on one host; then the row GPU tests of replays,
# streams, threads and outputs meeting inputs.
. tools/device-preamble.sh
. tools/ab-lib.sh
ab_small_calls 200
echo "timed at ${SECONDS}s"
. tools/device-pytest.sh
gpu_tests 300 200 t.txt -n 12 tests/test_rows_gpu.py \
    -k "repeat or replay or stream or thread or sharing or shifted or place or overlap or torch"
echo "done at ${SECONDS}s"
