#!/usr/bin/env bash
# Session 21, run I (device tool, kind nvidia-h200, carry .whl): the deferred-stores default on
# an H200: the key shapes against the same tile without deferral, cuBLAS and Triton (two
# passes each), then the GPU tests of the deferred default, the split tail and the dispatch.
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 128x256x4,128x256x4ke2,128x256x4k 2>&1 | tail -n 1
timeout 150 python3 -m nbkernels.matmul.bench_hopper --shapes key --no-sm80 --configs 128x256x4 \
    --json "${OUT:-/tmp}/key_h200.json" 2>&1 | grep -E "cublas=|rror" | cut -c1-250
echo "bench done at ${SECONDS}s"
left=$((${BUDGET:-575} - SECONDS))
timeout -s ABRT $left $T -n 16 tests/test_gemm_sm90a_gpu.py \
    -k "streamk or default_dispatch or fused_bias_gelu or splits_a_short" > /tmp/t.txt 2>&1
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -12
cp /tmp/t.txt "${OUT:-/tmp}/t_h200.txt"
