#!/usr/bin/env bash
# Session 28, run E (device tool, carry .whl): the replays after the overlap checks moved into
# the generated gemm replay (repeat.guard_source): the GPU tests of out meeting an input
# (shared, shifted, in place) and of the replays, then the small calls twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 420 300 t.txt -n 12 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    tests/test_gemm_sm90a_gpu.py tests/test_gemm_f64_gpu.py \
    -k "sharing or shifted or place or overlap or repeat or replay or stream or thread or tensor_maps or map_store"
for round in 1 2; do
    echo "--- round $round"
    timeout 200 python3 tools/host_parts.py --calls 2>&1 | grep -v "^ *$" | head -20
done
