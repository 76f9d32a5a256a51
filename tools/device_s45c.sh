#!/usr/bin/env bash
# Session 45, run C (device tool, carry .whl and _ab; _ab/old = `git archive f9e5b60`, the
# session's package code before h9): the final repeat path.
# 1. The replay GPU tests of gemm, rows and sm90a (repeat, replay, stream, thread, in-place,
#    overlap, tensor maps; the split tail's compile-heavy cases left out) and DLPack.
# 2. The whole row GPU file (every op, layout and framework through the generated keys).
# 3. The small calls, the session's start against this tree, alternated twice (torch too).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
gpu_tests 200 150 t_replay.txt -n 12 tests/test_gemm_gpu.py tests/test_gemm_sm90a_gpu.py \
    tests/test_array_streams_gpu.py tests/test_dlpack.py \
    -k "(sharing or shifted or place or overlap or repeat or replay or stream or thread or tensor_maps or dlpack) and not streamk"
gpu_tests 300 250 t_rows.txt -n 12 tests/test_rows_gpu.py
ab_small_calls 150
echo "done at ${SECONDS}s"
