#!/usr/bin/env bash
# Session 7, after device_staged_check.sh on the same warm machine (its kernel cache): the key
# shapes with the staged default against the guarded-store epilogue (g), cuBLAS and Triton.
. tools/device-preamble.sh  # environment, log, GPU
timeout 500 python3 -m nbkernels.matmul.bench_hopper --shapes key --configs 128x256x4g \
    --no-sm80 --dtypes bfloat16,float16 --json "$out/bench90.json" > "$out/bench90.txt" 2>&1
echo "bench rc=$?"; tail -n 30 "$out/bench90.txt"
