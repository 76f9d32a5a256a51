#!/usr/bin/env bash
# Session 45, run B (device tool, carry .whl and _ab; _ab/old = `git archive f9e5b60`, the
# session's package code before h9): the small calls, the session's start against this tree
# (tools/host_parts.py --calls alternated twice), the same Python on CuPy stand-ins
# (tools/rows_host_ab.py, both trees), then the replay GPU tests of gemm, rows and sm90a
# (the generated keys and the replays' inline CuPy calls).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_small_calls 200
old=$(cd _ab/old && pwd)
for r in 1 2; do
    echo "stand-in old: $(cd "$old" && PYTHONPATH=/tmp/site:$old timeout 60 python3 "$OLDPWD/tools/rows_host_ab.py" 2>&1 | tail -1)"
    echo "stand-in new: $(timeout 60 python3 tools/rows_host_ab.py 2>&1 | tail -1)"
done
gpu_tests 250 200 t.txt -n 12 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    tests/test_gemm_sm90a_gpu.py tests/test_array_streams_gpu.py tests/test_dlpack.py \
    -k "sharing or shifted or place or overlap or repeat or replay or stream or thread or tensor_maps or dlpack"
echo "done at ${SECONDS}s"
