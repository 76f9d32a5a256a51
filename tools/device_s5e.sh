#!/usr/bin/env bash
# Session 5, run 7 (device tool, carry .whl; about 4 minutes): the cluster kernel after the
# remote release lost its GPU-wide fence: its GPU tests, then the benchmark alone on the GPU.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BH="python3 -m nbkernels.matmul.bench_hopper"
CFG=128x256x4c2,256x128x4wc2,128x128x6c2,128x128x6pc2,128x64x6c2
timeout 150 $BH --prewarm-only --configs "$CFG" > "$out/prewarm90.txt" 2>&1
tail -n 1 "$out/prewarm90.txt"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    -k "cluster or Cluster" > "$out/t_cluster.txt" 2>&1
echo "cluster tests rc=$?: $(tail -n 1 "$out/t_cluster.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_cluster.txt" | head -5
timeout 120 $BH --shapes 8192x8192x8192,4096x4096x4096,4096x11008x4096,8192x8192x1024,2048x2048x2048 \
    --dtypes bfloat16 --no-sm80 --configs 128x256x4c2,256x128x4wc2,128x128x6c2 \
    --json "$out/bench_sm90a.json" > "$out/bench.txt" 2>&1 || echo "bench rc=$?"
grep bfloat16 "$out/bench.txt"
echo "done at ${SECONDS}s"
