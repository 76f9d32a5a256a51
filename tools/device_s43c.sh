#!/usr/bin/env bash
# Session 43, run C (H200; carry .whl): where the split tail's pieces form loses 12% at 4096^3
# (perf-notes s29, runs A-B). (1) ncu's own durations (no flush, no clock lock) of the
# default, 128x256x4ke2 and cuBLAS at 4096^3 bf16; (2) the per-SASS-line stall samples of one
# 128x256x4ke2 launch (top lines, and the page gzipped for reading on the CPU).
. tools/device-preamble.sh
timeout 150 python3 tools/prewarm_sm90a.py default 128x256x4ke2
timeout 120 ncu --profile-from-start off --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum \
    python3 tools/profile_ncu.py gemm 4096 128x256x4ke2 2>&1 | grep -E "^\s+(gpu__|sm__|smsp__)|^  [a-z_]+.*\(" | head -20
echo "durations at ${SECONDS}s"
timeout 200 ncu --profile-from-start off --cache-control none --clock-control none \
    --launch-skip 1 --launch-count 1 --section SourceCounters --section WarpStateStats \
    -o "$out/sk4096" python3 tools/profile_ncu.py gemm 4096 128x256x4ke2 > "$out/ncu_src.txt" 2>&1
echo "ncu source rc=$? at ${SECONDS}s"; tail -n 3 "$out/ncu_src.txt"
timeout 90 ncu -i "$out/sk4096.ncu-rep" --page source --csv --print-source sass 2>/dev/null > "$out/src_sk.csv"
timeout 60 ncu -i "$out/sk4096.ncu-rep" --page details 2>/dev/null | grep -iE "stall|warp cycles|issued" | head -30
python3 tools/ncu_lines.py "$out/src_sk.csv" 40
gzip -f "$out/src_sk.csv"; rm -f "$out/sk4096.ncu-rep"
echo "done at ${SECONDS}s"
