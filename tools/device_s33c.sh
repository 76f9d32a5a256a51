#!/usr/bin/env bash
# Session 33, run C (same machine, warm, after run B): the map cache without NumPy on a miss
# (perf-notes h6), its GPU tests again (repeat calls on new arrays, 300 pairs on a
# non-blocking stream, the captured CUDA graph, torch), tools/map_costs.py, and
# compute-sanitizer memcheck on the sm90a edge cases with the driver API's own error returns
# left out (run B counted them: CuPy and numba probe attributes that may not exist).
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 150 140 t_c.txt -n 8 tests/test_gemm_sm90a_gpu.py -k "repeat or map_cache or \
captured or torch"
timeout 60 python3 tools/map_costs.py 2>&1 | tail -n 4
cases="sm90a sm90a/128x128x6p sm90a/128x256x4 sm90a/128x256x4c2 sm90a/256x128x4w"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 \
    python3 tools/sanitize_gemm.py $cases 2>&1 | grep -v Warning | tail -n 8
echo "memcheck rc=$? at ${SECONDS}s"
timeout 100 compute-sanitizer --tool memcheck --print-limit 3 python3 tools/sanitize_gemm.py \
    sm90a 2>&1 | grep -E "^=========" | head -n 12
echo "done at ${SECONDS}s"
