#!/usr/bin/env bash
# Session 37, run E (carry .whl): the demo timed as the benchmarks time (bench._time), at
# 2048^3 twice, and its GPU test (1024^3).
. tools/device-preamble.sh
. tools/device-pytest.sh
for i in 1 2; do timeout 120 python3 -m nbkernels demo 2>&1 | tail -n 7; done
gpu_tests 150 140 demo.txt tests/test_demo.py
