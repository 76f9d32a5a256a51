#!/usr/bin/env bash
# Session 6, run 5 (device tool, carry .whl): the sm90a GPU test file with the staged epilogue
# only for one-block consumers (runs 2 and 4 stopped in 256x128x4w cases), then the bf16
# benchmark (of the default, which was the staged epilogue then; it is 128x256x4s now).
. tools/device-preamble.sh  # environment, log, GPU
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(tail -n 1 "$out/t_sm90a.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_sm90a.txt" | head -8
timeout 150 python3 -m nbkernels.matmul.bench_hopper --shapes 8192x8192x8192,4096x4096x4096,4096x11008x4096,8192x8192x1024,2048x2048x2048 \
    --dtypes bfloat16 --no-sm80 --json "$out/bench_sm90a.json" > "$out/bench.txt" 2>&1 || echo "bench rc=$?"
grep -E "bfloat16" "$out/bench.txt"
echo "done at ${SECONDS}s"
