#!/usr/bin/env bash
# Session 34, run B (same machine): the small calls, old tree (_ab/old, 11907d7) against this
# one, alternated twice; then the repeat, stream, thread and in-place GPU tests of gemm, rows
# and sm90a on this tree (the replays now generated inside a device check).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_small_calls 150
gpu_tests 330 300 t.txt -n 12 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    tests/test_gemm_sm90a_gpu.py \
    -k "sharing or shifted or place or overlap or repeat or replay or stream or thread or tensor_maps"
