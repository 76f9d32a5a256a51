#!/usr/bin/env bash
# Session 7: compute-sanitizer memcheck and racecheck on the edge-shape GEMMs of every variant,
# now with the staged sm90a epilogue in each consumer layout and a cluster pair (a plain run
# first fills the kernel cache); then SM clock and power of the sm90a default and cuBLAS at
# 8192^3 (tools/clocks_sm90a.py).
. tools/device-preamble.sh  # environment, log, GPU
timeout 220 python3 tools/sanitize_gemm.py > "$out/plain.txt" 2>&1
echo "plain rc=$?"; tail -n 3 "$out/plain.txt"
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no python3 tools/sanitize_gemm.py \
    > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 150 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
timeout 60 python3 tools/clocks_sm90a.py 8192 4
