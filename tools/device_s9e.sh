#!/usr/bin/env bash
# Session 9, run 5: Nsight Compute (full set) on the float64 default (k-groups of 16, fragment
# reads at base + constant) and cuBLAS DGEMM at 4096^3; then the f64 bench of the default
# against 3 stages and other rasterization groups at 2048^3 and 4096^3 (where the default is
# 0.88-0.89x cuBLAS).
. tools/device-preamble.sh  # environment, log, GPU
timeout 120 python3 tools/profile_ncu.py dgemm 4096 || echo "warm rc=$?"
NCU="ncu --profile-from-start off --print-summary none --import-source no"
timeout 240 $NCU --set full python3 tools/profile_ncu.py dgemm 4096 > "$out/ncu_dgemm.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Instructions  |Registers Per|L2 Cache Throughput|Warp Cycles Per Issued" \
    "$out/ncu_dgemm.txt" | head -20
T="default;128,64,128,2,2,3,min_blocks=2;128,64,128,2,2,4,4,2;128,64,128,2,2,4,16,2"
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096 --tiles "$T" \
    --prewarm 4 --json "$out/bench_f64e.json" > "$out/bench.txt" 2>&1
echo "bench rc=$?"; tail -n 8 "$out/bench.txt"
echo "done at ${SECONDS}s"
