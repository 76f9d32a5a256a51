#!/usr/bin/env bash
# Why the sm90a GEMM's tensor pipe sits near 68% at 8192^3 (ncu, run 1 of session 4): warp-stall
# samples per SASS instruction of the default kernel, a 128-row-consumer variant and cuBLAS
# (raw CSV of ncu's source page, gzipped, to $OUT), then the benchmark of the candidates.
# Usage (device tool, carry .whl): bash tools/device_sm90a_prof.sh [configs] [bench shapes]
set -o pipefail
. tools/device-env.sh || exit 1
configs=${1:-256x128x4w}
shapes=${2:-key}
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs "$configs" \
    || echo "PREWARM rc=$?"
timeout 60 python3 -m nbkernels.matmul.bench_hopper --shapes 4096x4096x4096 --dtypes bfloat16 \
    --no-triton --no-sm80 --reps 5 --configs "$configs" || { echo "SMOKE FAILED rc=$?"; exit 1; }
echo "smoke done at ${SECONDS}s"
cfg_list=${configs//,/ }
timeout 120 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -o "$out/gemm8192" python3 tools/profile_ncu.py gemm 8192 $cfg_list > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/gemm8192.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src8192.csv.gz"
echo "source page rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/gemm8192.ncu-rep" --page details --print-summary none 2>&1 \
    | grep -E "^  [a-zA-Z_]|Duration|Compute \(SM\)|L2 Cache Throughput|L1/TEX Cache" | cut -c1-120
rm -f "$out/gemm8192.ncu-rep"
timeout 300 python3 -m nbkernels.matmul.bench_hopper --shapes "$shapes" --dtypes bfloat16 \
    --configs "$configs" --no-sm80 --json "$out/bench_sm90a.json"
echo "bench rc=$? at ${SECONDS}s"
