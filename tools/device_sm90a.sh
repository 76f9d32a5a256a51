#!/usr/bin/env bash
# The sm90a GEMM on the H200: build every tile the tests and the benchmark use (in parallel),
# a smoke check under a time limit (a wrong mbarrier phase hangs, it does not fail), the GPU
# tests, then the benchmark against cuBLAS, Triton and the sm_80-class kernel.
# Usage (device tool, carry .whl): bash tools/device_sm90a.sh [bench shapes] [extra configs]
set -o pipefail
. tools/device-env.sh || exit 1
shapes=${1:-key}
configs=${2:-128x256x3,128x128x4,256x128x4,64x128x4}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 - <<PY || exit 1
from nbkernels.matmul import bench_hopper as bh, wgmma_config as wc
cfgs = [wc.DEFAULT, wc.SMALL] + [wc.WgmmaConfig(*map(int, c.split("x"))) for c in "$configs".split(",") if c]
lay = ((True, False), (True, True), (False, False), (False, True))
import time; t = time.time()
print("prewarmed", bh.prewarm(cfgs, layouts=lay), "builds in", round(time.time() - t), "s", flush=True)
PY
timeout 120 python3 -m nbkernels.matmul.bench_hopper --shapes 4096x4096x4096 --dtypes bfloat16 \
    --no-triton --no-sm80 --reps 5 || { echo "SMOKE FAILED rc=$?"; exit 1; }
timeout 300 python3 -m pytest tests/test_gemm_sm90a_gpu.py -q -x -p no:cacheprovider 2>&1 | tail -25
timeout 400 python3 -m nbkernels.matmul.bench_hopper --shapes "$shapes" --configs "$configs" \
    --json "${OUT:-/tmp}/bench_sm90a.json"
