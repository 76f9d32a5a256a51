#!/usr/bin/env bash
# Session 27 run F: the final code (a fused epilogue on a and b transposed runs swapped too,
# given D's own row and column back). The f64 GPU file.
# Usage (device tool, carry .whl): bash tools/device_s27f.sh
. tools/device-preamble.sh  # environment, log, GPU
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_f64_gpu.py \
    > "$out/t_f64.txt" 2>&1
echo "t_f64 rc=$?: $(tail -n 1 $out/t_f64.txt)"; grep -h -E "^(FAILED|ERROR)" "$out/t_f64.txt" | head
echo "done at ${SECONDS}s"
