#!/usr/bin/env bash
# Session 33, run A (device tool, carry .whl): the sm90a GEMM with its tensor maps passed by
# value in the launch's parameters (launch.by_value_ptx). Builds the tiles the selected tests
# use in parallel first, then the GPU tests that touch the maps' path (repeat calls on new
# arrays, 300 pairs on a non-blocking stream, a captured CUDA graph, torch on a side stream,
# dispatch, fused epilogues, persistent tiles, the split tail, clusters), then the host cost
# of a call on a new activation (tools/map_costs.py).
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 128x128x6p,128x256x4ke2,128x256x4c2,128x128x6pc2 2>&1 | tail -n 2
gpu_tests 300 250 t_a.txt -n 16 tests/test_gemm_sm90a_gpu.py -k "repeat or map_cache or \
captured or torch or default_dispatch or fused or many_tiles or streamk or splits_a_short or cluster"
timeout 60 python3 tools/map_costs.py 2>&1 | tail -n 4
echo "done at ${SECONDS}s"
