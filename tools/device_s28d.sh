#!/usr/bin/env bash
# Session 28, run D (device tool, carry .whl): the whole row GPU file on the generated
# repeat-call replays (perf-notes h4); its tests call each op more than once a geometry.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 540 400 t_rows.txt -n 14 tests/test_rows_gpu.py
