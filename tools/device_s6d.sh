#!/usr/bin/env bash
# Session 6, run 3 (device tool, carry .whl): the case the sm90a GPU tests stopped at (run 2),
# staged and guarded, each with a timeout; then the row kernels and the f64 GEMM re-timed with
# the benchmark's new timing (host overhead outside the events, reported apart).
. tools/device-preamble.sh  # environment, log, GPU
python3 tools/gpu_case31.py
timeout 220 python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes auto \
    --json "$out/rows.json" > "$out/rows.txt" 2>&1 || echo "rows rc=$?"
grep -vE "^\s*$" "$out/rows.txt" | tail -n 30
timeout 120 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 \
    --json "$out/f64.json" > "$out/f64.txt" 2>&1 || echo "f64 rc=$?"
grep -E "f64" "$out/f64.txt"
echo "done at ${SECONDS}s"
