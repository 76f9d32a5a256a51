#!/usr/bin/env bash
# Session 30, run G (device tool, carry .whl; measurement only, perf-notes r28): Nsight Compute
# on 16-bit softmax and rms_norm at 8192 x 8192 and 32768 x 4096 (one launch each, after a
# warm-up), the sections that say where a row kernel's time goes; the key lines printed.
. tools/device-preamble.sh
NCU="ncu --profile-from-start off --print-summary none --import-source no"
for shape in "8192 8192" "32768 4096"; do
    set -- $shape
    timeout 90 python3 tools/profile_ncu.py rows $1 $2 softmax rms > /dev/null 2>&1
    timeout 150 $NCU --section SpeedOfLight --section WarpStateStats --section Occupancy \
        --section MemoryWorkloadAnalysis --section SchedulerStats --section LaunchStats \
        python3 tools/profile_ncu.py rows $1 $2 softmax rms > "$out/ncu_$1x$2.txt" 2>&1
    echo "ncu $1x$2 rc=$? at ${SECONDS}s"
    grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Block Size|Grid Size|Registers Per|Waves Per SM|L2 Hit Rate|Mem Busy|Max Bandwidth" \
        "$out/ncu_$1x$2.txt" | head -80
done
echo "done at ${SECONDS}s"
