#!/usr/bin/env bash
# Session 28, run B (device tool, carry .whl and _ab; perf-notes h4): the repeat paths'
# generated replays. The small calls' wall time (tools/host_parts.py --calls) on the tree
# before (HEAD, unpacked under _ab/old) and on this tree, alternated twice on one host; the
# pieces on this tree; then the GPU tests that replay recorded calls (new data, outputs,
# streams, threads, torch, split-K, split tail, tensor maps).
. tools/device-preamble.sh
. tools/ab-lib.sh
ab_small_calls 240
echo "--- pieces, new tree"
timeout 200 python3 tools/host_parts.py 2>&1 | grep " us$" | head -50
echo "timed at ${SECONDS}s"
. tools/device-pytest.sh
gpu_tests 330 200 t.txt -n 12 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    tests/test_gemm_sm90a_gpu.py tests/test_gemm_f64_gpu.py \
    -k "repeat or replay or stream or thread or tensor_maps or map_store"
