#!/usr/bin/env bash
# Session 45, run D (device tool, carry .whl and _ab): what named barriers cost an SM's
# residency (tools/barrier_occupancy.py; run C's row file failed the residency estimate on
# the float32-vector layer_norm build, which uses all 16), the one replay test run C's limit
# stopped (test_out_sharing_memory_with_an_input, all cases), and the small calls again.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
timeout 60 python3 tools/barrier_occupancy.py
gpu_tests 240 200 t_out.txt -n 8 tests/test_gemm_gpu.py -k "test_out_sharing_memory_with_an_input"
ab_small_calls 120
echo "done at ${SECONDS}s"
