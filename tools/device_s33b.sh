#!/usr/bin/env bash
# Session 33, run B (same machine, warm, after run A): the 200-case random sweep and the
# deferred-store sweep on the by-value maps, compute-sanitizer memcheck and racecheck on the
# sm90a edge cases of tools/sanitize_gemm.py, and the key shapes against cuBLAS (speed should
# not move: the maps' address is taken from the parameters instead of loaded from them).
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 256x128x4,256x128x4w,64x128x4,64x256x5p,128x256x4d2 2>&1 | tail -n 2
gpu_tests 200 180 t_b.txt -n 16 tests/test_gemm_sm90a_gpu.py -k "random_sweep_sm90a and not \
guarded and not offloaded"
cases="sm90a sm90a/128x128x6p sm90a/128x256x4 sm90a/128x256x4c2 sm90a/256x128x4w"
for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --print-limit 20 \
        python3 tools/sanitize_gemm.py $cases 2>&1 | grep -v Warning | tail -n 3
    echo "$tool rc=$? at ${SECONDS}s"
done
timeout 100 python3 -m nbkernels.matmul.bench_hopper --shapes 4096x4096x4096,8192x8192x8192,8192x8192x1024 \
    --dtypes bfloat16 --no-sm80 --no-triton 2>&1 | tail -n 8
timeout 60 python3 tools/map_costs.py 2>&1 | tail -n 5
echo "done at ${SECONDS}s"
