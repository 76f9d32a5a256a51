#!/usr/bin/env bash
# Session 6, run 1 (device tool, carry .whl; about 8 minutes): the staged sm90a epilogue (its
# GPU tests, then the benchmark alone on the GPU against the guarded-store epilogue, cuBLAS
# and Triton) with the benchmark's new timing (host overhead outside the events).
. tools/device-preamble.sh  # environment, log, GPU
BH="python3 -m nbkernels.matmul.bench_hopper"
# (run 1 had the staged epilogue as the default and timed the guarded one as 128x256x4g; with
# the default guarded again, the same comparison is the default against 128x256x4s)
timeout 200 $BH --prewarm-only --configs 128x256x4s > "$out/prewarm90.txt" 2>&1
tail -n 1 "$out/prewarm90.txt"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(tail -n 1 "$out/t_sm90a.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_sm90a.txt" | head -8
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_intrinsics_gpu.py \
    -k "vector or shuffle" > "$out/t_probes.txt" 2>&1
echo "probe tests rc=$?: $(tail -n 1 "$out/t_probes.txt")"
timeout 150 $BH --shapes 8192x8192x8192,4096x4096x4096,4096x11008x4096,8192x8192x1024,2048x2048x2048 \
    --dtypes bfloat16,float16 --no-sm80 --configs 128x256x4s \
    --json "$out/bench_sm90a.json" > "$out/bench.txt" 2>&1 || echo "bench rc=$?"
grep -E "bfloat16|float16" "$out/bench.txt"
echo "done at ${SECONDS}s"
