#!/usr/bin/env bash
# Session 11, run 6 (device tool, carry .whl): is the sm80-class kernel's 8192^3 loss a
# power-of-two leading dimension? tools/gemm_ld_probe.py, after compiling its kernels.
. tools/device-preamble.sh  # environment, log, GPU
timeout 200 python3 -m nbkernels.matmul.bench --dtypes bf16,f16 --sizes 4096 --variant sm80 \
    --prewarm 2 --prewarm-only > "$out/prewarm.txt" 2>&1
echo "prewarm: $(tail -n 1 $out/prewarm.txt) at ${SECONDS}s"
timeout 300 python3 tools/gemm_ld_probe.py
echo "done at ${SECONDS}s"
