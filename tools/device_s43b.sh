#!/usr/bin/env bash
# Session 43, run B (H200; carry .whl): the split tail's hand-off with acquire/release at GPU
# scope instead of cuda.threadfence() (fence.sc.gpu), perf-notes s29 after run A.
#  1. the default tile and 128x256x4ke2 beside cuBLAS in one bench process (builds in
#     parallel first), 4096^3 and 8192x8192x1024, bf16 and f16; a second process the same;
#  2. the main job on today's code: doctor, the demo on an empty kernel cache and again,
#     the intrinsic probes (the new gpu_handoff probe among them).
. tools/device-preamble.sh
for p in 1 2; do
    echo "--- process $p at ${SECONDS}s"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 $([ $p = 1 ] && echo --prewarm) \
        --shapes 4096,8192x8192x1024 --configs 128x256x4ke2 --json "$out/b$p.json" 2>&1 \
        | grep -v Warning | tail -n 5
done
python3 tools/bench_pair.py 128x256x4ke2 "$out"/b1.json "$out"/b2.json
echo "--- main job at ${SECONDS}s"
. tools/main-job.sh
main_job
echo "done at ${SECONDS}s"
