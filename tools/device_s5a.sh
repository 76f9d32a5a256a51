#!/usr/bin/env bash
# Session 5's first GPU run (device tool, carry .whl; under 8 minutes): the row benchmark
# (the session-4 kernels' speed, against docs/rows_bench_h200_s4_baseline.json) beside the
# sm90a and f64 prewarm builds, then the f64 benchmark against cuBLAS DGEMM and the sm90a
# GPU sweep. Log: $OUT/log.txt.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="python3 -m pytest -q -p no:cacheprovider"
B="python3 -m nbkernels.matmul.bench"
F64="--dtypes f64 --sizes 2048,4096,8192 --tiles default"
timeout 170 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p > "$out/prewarm90.txt" 2>&1 &
timeout 200 $B $F64 --prewarm 2 --prewarm-only > "$out/prewarm64.txt" 2>&1 &
timeout 200 python3 -m nbkernels.rows.bench --dtypes bf16,f32 --json "$out/rows_bench.json" \
    > "$out/rows_bench.txt" 2>&1 &
wait $(jobs -p)  # not a bare wait: that also waits for the tee of the log
cat "$out/rows_bench.txt" | tail -n 40
tail -n 1 "$out/prewarm90.txt"; tail -n 1 "$out/prewarm64.txt"; echo "parallel phase done at ${SECONDS}s"
timeout 90 $B $F64 --reps 20 --json "$out/bench_f64.json" || echo "f64 bench rc=$?"
timeout 170 $T tests/test_gemm_sm90a_gpu.py > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests: $(tail -n 1 "$out/t_sm90a.txt")"; grep -E "^(FAILED|ERROR)" "$out/t_sm90a.txt" | head -5
echo "done at ${SECONDS}s"
