#!/usr/bin/env bash
# Session 18, run A (device tool, carry .whl): the split tail with its fixup wait written as a
# warp vote (perf-notes s14: the lane-0 spin loop was divergent and pushed the k-loop off the
# uniform datapath). The vote intrinsic's probe, the split-tail GPU tests, compute-sanitizer on
# one split GEMM, then the default against 128x256x4k on split and unsplit shapes.
. tools/device-preamble.sh
timeout 90 python3 -m nbkernels.intrinsics.selfcheck --probe warp_vote --out /tmp/vote.npz 2>&1 | tail -n 4; echo "vote probe rc=$?"
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 2
echo "prewarm at ${SECONDS}s"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py -k streamk 2>&1 | tail -n 3
echo "tests at ${SECONDS}s"
. tools/sanitize.sh tools/sanitize_streamk.py 120
timeout 240 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16,float16 --no-triton --no-sm80 \
    --shapes 4096x11008x4096,2304x2304x8192,3072x3072x8192,4096x4096x4096,8192x8192x1024,8192x8192x8192 \
    --configs 128x256x4k --json "${OUT:-/tmp}/tail.json" 2>&1 | tail -n 16
echo "done at ${SECONDS}s"
