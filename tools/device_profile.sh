#!/usr/bin/env bash
# Nsight Compute on the H200: the sm90a GEMM against cuBLAS (full set, bf16 8192^3 and 2048^3)
# and the bf16 row kernels at 8192 x 8192 (speed of light, warp states, instruction mix),
# then the row benchmark (all modes) as the baseline for the next change. Text reports go to
# $OUT/ncu_*.txt, the log to $OUT/log.txt.
# Usage (device tool, carry .whl): bash tools/device_profile.sh
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ncu --version | tail -1
ncu --query-metrics --chip gh100 2>/dev/null | grep -iE "gmma|pipe_tensor" | cut -c1-60 | head -12
timeout 120 python3 tools/profile_ncu.py gemm 2048 128x256x4 || echo "warm gemm rc=$?"
timeout 60 python3 tools/profile_ncu.py rows 8192 8192 rms rms_res layer_norm softmax swiglu \
    || echo "warm rows rc=$?"
echo "warm done at ${SECONDS}s"
NCU="ncu --profile-from-start off --print-summary none --import-source no"
for n in 8192 2048; do
    timeout 150 $NCU --set full python3 tools/profile_ncu.py gemm $n 128x256x4 \
        > "$out/ncu_gemm_$n.txt" 2>&1
    echo "ncu gemm $n rc=$? at ${SECONDS}s"
done
timeout 120 $NCU --section SpeedOfLight --section WarpStateStats --section InstructionStats \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section SchedulerStats --section ComputeWorkloadAnalysis \
    python3 tools/profile_ncu.py rows 8192 8192 rms rms_res layer_norm softmax swiglu \
    > "$out/ncu_rows.txt" 2>&1
echo "ncu rows rc=$? at ${SECONDS}s"
timeout 150 python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes auto,0,1,2 \
    --json "$out/rows_bench.json"
echo "bench rc=$? at ${SECONDS}s"
