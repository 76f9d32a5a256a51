#!/usr/bin/env bash
# Session 9, run 2: Nsight Compute (full set) on the float64 GEMM at 4096^3: the default
# (k-groups of 16), the same tile with k-groups of 8, and cuBLAS DGEMM, one launch each; the
# text report goes to $OUT/ncu_dgemm.txt. Then the f64 bench of two more tiles (3 stages; 4x2
# warps at 4 stages do not fit) against the default, for the next step.
. tools/device-preamble.sh  # environment, log, GPU
K8="128,64,128,2,2,4,min_blocks=2,mma_k=8"
timeout 120 python3 tools/profile_ncu.py dgemm 4096 "$K8" || echo "warm rc=$?"
echo "warm done at ${SECONDS}s"
NCU="ncu --profile-from-start off --print-summary none --import-source no"
timeout 300 $NCU --set full python3 tools/profile_ncu.py dgemm 4096 "$K8" \
    > "$out/ncu_dgemm.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|Executed Ipc A|No Eligible|Stall|L2 Hit Rate|SM Frequency" \
    "$out/ncu_dgemm.txt" | head -80
timeout 150 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 4096,8192 \
    --tiles "default;128,64,128,2,2,3,min_blocks=2" --json "$out/bench_f64b.json" > "$out/bench.txt" 2>&1
echo "bench rc=$?"; tail -n 4 "$out/bench.txt"
echo "done at ${SECONDS}s"
