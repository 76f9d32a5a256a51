#!/usr/bin/env bash
# Session 40, run F (H200; carry .whl): GPU correctness of the two consumer-side changes that
# no GPU test has run yet: the ping-pong turn on a warp-uniform index (perf-notes s24) and the
# staged epilogue's alpha branch (s25). The 200-case random sweep (every tile of part 2, the
# ping-pong ones included; alpha 0.75 or 1.5) and the 80-case deferred-store sweep (the default
# tile's path), then the fused-epilogue and persistent-tile tests (alpha 1, ping-pong with many
# tiles a block) where time is left. -v names what passed (passed_f.txt).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/sm90a-parts.sh
sm90a_part 2
cfgs="$cfgs,128x256x4e2,128x128x6e2,256x128x4e1,128x256x3e3,64x128x4e2,128x256x3d2e4"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $cfgs 2>&1 | tail -n 1
echo "prewarmed at ${SECONDS}s"
gpu_tests $((${BUDGET:-560} - 100 - SECONDS)) 250 t_f.txt -n 16 tests/test_gemm_sm90a_gpu.py \
    -k "random_sweep_sm90a and not guarded and not offloaded"
gpu_tests $((${BUDGET:-560} - 10 - SECONDS)) 250 t_f2.txt -n 8 tests/test_gemm_sm90a_gpu.py \
    -k "many_tiles or fused_bias_gelu or default_dispatch"
grep -hoE "PASSED tests/[^ ]+" "$out/t_f.txt" "$out/t_f2.txt" | cut -d' ' -f2 > "$out/passed_f.txt"
echo "done at ${SECONDS}s"
