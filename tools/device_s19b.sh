#!/usr/bin/env bash
# Session 19, run B (device tool, carry .whl): the staged epilogue's tiles stored by TMA (the
# new default) against the warps' own stores (suffix v) and against 3 stages with a whole tile
# of TMA staging (perf-notes s15); the GPU tests that touch it (repeat calls with kept
# results, the map store's bound, fused epilogues, dispatch, split tail); what a new output's
# tensor map costs on the host (tools/map_costs.py).
. tools/device-preamble.sh
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm --no-triton --no-sm80 \
    --configs 128x256x4v,128x256x3 --shapes 64x64x64 --dtypes bfloat16 2>&1 | grep prewarmed
echo "prewarm at ${SECONDS}s"
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gemm_sm90a_gpu.py \
    -k "repeat or map_store or fused or dispatch or streamk or torch" 2>&1 | tail -n 4
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_hopper_gpu.py -k "map_store_entry" 2>&1 | tail -n 2
echo "tests at ${SECONDS}s"
timeout 60 python3 tools/map_costs.py 2>&1 | tail -n 8
echo "costs at ${SECONDS}s"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-sm80 \
    --configs 128x256x4v,128x256x3 --json "${OUT:-/tmp}/tma_store.json" 2>&1 | tail -n 10
echo "done at ${SECONDS}s"
