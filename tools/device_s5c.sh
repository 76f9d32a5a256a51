#!/usr/bin/env bash
# Session 5, run 3 (device tool, carry .whl; about 9 minutes): the first GPU run of the
# 2-CTA cluster sm90a kernel (TMA multicast of B), under time limits (a wrong barrier hangs).
# Phase 1 in parallel: builds of the cluster tiles, the f64 GPU tests (new default tile), the
# row GPU tests of the split layout (weights read from global: the D2 refactor). Then the
# cluster GPU tests, then (alone on the GPU) the sm90a benchmark against cuBLAS and Triton with
# the cluster tiles beside the default, and the f64 benchmark.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="python3 -m pytest -q -p no:cacheprovider"
BH="python3 -m nbkernels.matmul.bench_hopper"
CFG=${CFG:-128x256x4c2,256x128x4wc2,128x128x6c2,128x128x6pc2,128x64x6c2}
timeout 200 $BH --prewarm-only --configs "$CFG" > "$out/prewarm90.txt" 2>&1 &
timeout 200 $T tests/test_gemm_f64_gpu.py > "$out/t_f64.txt" 2>&1 &
timeout 200 $T tests/test_rows_gpu.py -k "split" > "$out/t_rows_split.txt" 2>&1 &
wait $(jobs -p)  # not a bare wait: that also waits for the tee of the log
echo "f64 tests: $(tail -n 1 "$out/t_f64.txt")"; grep -E "^(FAILED|ERROR)" "$out/t_f64.txt" | head -5
echo "row split tests: $(tail -n 1 "$out/t_rows_split.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_rows_split.txt" | head -5
tail -n 1 "$out/prewarm90.txt"; echo "phase 1 done at ${SECONDS}s"
timeout 60 $BH --shapes 4096x4096x4096 --dtypes bfloat16 --configs 128x256x4c2 --no-triton \
    --no-sm80 --reps 5 > "$out/smoke.txt" 2>&1; echo "smoke rc=$?"; tail -n 4 "$out/smoke.txt"
timeout 150 $T tests/test_gemm_sm90a_gpu.py -k "cluster or Cluster" -x > "$out/t_cluster.txt" 2>&1
echo "cluster tests rc=$?: $(tail -n 1 "$out/t_cluster.txt")"
grep -E "^(FAILED|ERROR)|Error" "$out/t_cluster.txt" | head -8
echo "cluster tests done at ${SECONDS}s"
timeout 200 $BH --shapes 8192x8192x8192,4096x4096x4096,4096x11008x4096,8192x8192x1024,2048x2048x2048 \
    --dtypes bfloat16 --no-sm80 --configs "${BCFG:-128x256x4c2,256x128x4wc2,128x128x6pc2}" \
    --json "$out/bench_sm90a.json" > "$out/bench_sm90a.txt" 2>&1 || echo "bench rc=$?"
tail -n 30 "$out/bench_sm90a.txt"
timeout 60 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 --reps 20 \
    --json "$out/bench_f64.json" || echo "f64 bench rc=$?"
echo "done at ${SECONDS}s"
