#!/usr/bin/env bash
# Session 18, run B (device tool, carry .whl): the split tail dispatched (wgmma_config.
# with_split_tail) and replayed by the repeat-call path. The split-tail and dispatch GPU tests
# (the new one: automatic split, replays queued back to back, torch), then the dispatch
# ("nbk") against the plain default tile and the forced split tail, at K = 1024, 2048 and
# 4096/8192 on shapes with a short last wave (sets SPLIT_TAIL_MIN_HALF_KTILES), and 4096^3.
. tools/device-preamble.sh
timeout 170 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4,128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    -k "streamk or split or repeat or dispatch" 2>&1 | tail -n 4
echo "tests at ${SECONDS}s"
timeout 170 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-triton --no-sm80 \
    --shapes 4096x11008x4096,4096x11008x2048,4096x11008x1024,2304x2304x8192,2304x2304x2048,2304x2304x1024,3072x3072x8192,4096x4096x4096 \
    --configs 128x256x4,128x256x4k --json "${OUT:-/tmp}/dispatch.json" 2>&1 | tail -n 17
echo "done at ${SECONDS}s"
