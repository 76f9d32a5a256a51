#!/usr/bin/env bash
# The sm90a GEMM on the H200: build every tile the tests and the benchmark use (in parallel
# processes), a smoke check under a time limit (a wrong mbarrier phase hangs, it does not
# fail), the GPU tests, then the benchmark against cuBLAS, Triton and the sm_80-class kernel.
# Output goes to $OUT/log.txt as it comes, so a run cut short still says where it stopped.
# Usage (device tool, carry .whl): bash tools/device_sm90a.sh [bench shapes] [extra configs]
set -o pipefail
. tools/device-env.sh || exit 1
shapes=${1:-key}
configs=${2:-128x256x4,64x128x4,128x128x6p,64x256x5p}
log=${OUT:-/tmp}/log.txt
exec > >(tee -a "$log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 python3 tools/wgmma_serial_check.py "${OUT:-/tmp}" || echo "serial check rc=$?"
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs "$configs" || echo "PREWARM rc=$?"
timeout 60 python3 -m nbkernels.matmul.bench_hopper --shapes 4096x4096x4096 --dtypes bfloat16 \
    --no-triton --no-sm80 --reps 5 || { echo "SMOKE FAILED rc=$?"; exit 1; }
timeout 240 python3 -m pytest tests/test_gemm_sm90a_gpu.py -q -x -p no:cacheprovider 2>&1 | tail -25
timeout 400 python3 -m nbkernels.matmul.bench_hopper --shapes "$shapes" --configs "$configs" \
    --json "${OUT:-/tmp}/bench_sm90a.json"
