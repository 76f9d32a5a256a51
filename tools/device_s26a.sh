#!/usr/bin/env bash
# Session 26 run A (perf-notes d6): the float64 GEMM at 2048^3, where it sits at 0.87x cuBLAS.
# (1) the f64 tiles that change the schedule's shape (stages, raster group, 4 blocks an SM of
# 64x64, one block of 128x128, fragments double-buffered) at 2048^3 and 4096^3 beside cuBLAS
# DGEMM; (2) ncu on one launch each of the default tile and cuBLAS at 2048^3: launch shape,
# speed of light, warp states and the per-instruction samples (source page, gzipped CSV).
# Usage (device tool, carry .whl): bash tools/device_s26a.sh
. tools/device-preamble.sh  # environment, log, GPU
TILES="default;128,64,128,2,2,3,8,2;128,64,128,2,2,4,4,2;128,64,128,2,2,4,16,2"
TILES="$TILES;64,64,128,2,2,3,8,4;128,128,128,4,2,3;128,64,128,2,2,4,8,2,1"
timeout 300 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --tiles "$TILES" \
    --prewarm 8 --prewarm-only > "$out/prewarm.txt" 2>&1
echo "prewarm rc=$? at ${SECONDS}s"; tail -n 3 "$out/prewarm.txt"
timeout 240 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096 --tiles "$TILES" \
    --json "$out/bench_f64.json" > "$out/bench.txt" 2>&1
echo "bench rc=$? at ${SECONDS}s"
NCU="ncu --profile-from-start off --print-summary none --import-source no"
timeout 150 $NCU --section LaunchStats --section Occupancy --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --section ComputeWorkloadAnalysis \
    -o "$out/d2048" python3 tools/profile_ncu.py dgemm 2048 > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/d2048.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src2048.csv.gz"
timeout 60 ncu -i "$out/d2048.ncu-rep" --page details --print-summary none > "$out/details.txt" 2>&1
rm -f "$out/d2048.ncu-rep"
grep -E "^  [a-zA-Z_]|Duration|Grid Size|Block Size|Registers|Shared Memory Config|Dynamic Shared|Achieved Occ|Theoretical Occ|Compute \(SM\) Thr|Issue Slots|Warp Cycles Per Issued|FP64" \
    "$out/details.txt" | cut -c1-110
python3 -m nbkernels.matmul.bench --summary "$out/bench_f64.json"
echo "done at ${SECONDS}s"
