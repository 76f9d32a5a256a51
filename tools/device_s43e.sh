#!/usr/bin/env bash
# Session 43, run E (H200; carry .whl): the split tail after the pieces form was taken out
# (perf-notes s29), with what stayed: the 32-bit schedule, a workspace slot per split tile,
# the acquire/release hand-off, the partial sums at immediate offsets.
#  1. the split-tail builds (defer 0 and 2, bf16 and f16, four operand majors) in parallel;
#  2. the sm90a GPU file's split-tail tests (explicit tiles, back-to-back calls, a fused
#     epilogue, the dispatch and its repeat calls, torch);
#  3. compute-sanitizer memcheck and racecheck on tools/sanitize_streamk.py;
#  4. the dispatch (split tail) beside cuBLAS at 4096x11008x4096 and 2304x2304x8192.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 170 python3 tools/prewarm_sm90a.py --kinds bf16,f16 --layouts all 128x256x4k 128x256x4ke2
gpu_tests 230 200 gpu_sk.txt tests/test_gemm_sm90a_gpu.py -k "streamk or split"
sanitizers 60 "tools/sanitize_streamk.py"
timeout 100 python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 \
    --shapes 4096x11008x4096,2304x2304x8192 --json "$out/e.json" 2>&1 | grep -v Warning | tail -n 4
echo "done at ${SECONDS}s"
