#!/usr/bin/env bash
# Session 16, run C (device tool, carry .whl): why stream-K lost in run B (perf-notes s12): ncu's
# memory figures (DRAM bytes, L2 hit rate) of the default and 128x256x4k at 4096^3, then both
# timed at shapes whose operands fit in L2 (4096x4096x1024 and x512: 16 and 8 MB).
. tools/device-preamble.sh
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs 128x256x4k 2>&1 | tail -n 1
out=${OUT:-/tmp}
timeout 150 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
    -o "$out/sk4096" python3 tools/profile_ncu.py gemm 4096 128x256x4k > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/sk4096.ncu-rep" --page details --print-summary none 2>&1 \
    | grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|L2 Hit Rate|Memory Throughput|L2 Cache Throughput|Grid Size" | cut -c1-110
rm -f "$out/sk4096.ncu-rep"
timeout 150 python3 -m nbkernels.matmul.bench_hopper --dtypes bfloat16 --no-triton --no-sm80 \
    --shapes 4096x4096x1024,4096x4096x512,4096x11008x1024 --configs 128x256x4k 2>&1 | tail -n 3
echo "done at ${SECONDS}s"
