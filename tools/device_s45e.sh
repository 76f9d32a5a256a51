#!/usr/bin/env bash
# Session 45, run E (device tool, carry .whl): the named barriers in the residency estimate
# (perf-notes r37). The row GPU file's residency test (the float32-vector layer_norm build
# loaded in its own process now) and every layer_norm case (the shared build's plans), then
# the README's main job once.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 280 240 t_ln.txt -n 12 tests/test_rows_gpu.py -k "resident or layer_norm"
echo "--- demo at ${SECONDS}s"
timeout 120 python3 -m nbkernels demo 2>&1 | tail -n 12
echo "done at ${SECONDS}s"
