#!/usr/bin/env bash
# Session 14, run E (device tool, carry .whl): the first benchmark figures on an H100 (every
# earlier figure is an H200's): the row kernels against copy bandwidth and torch (issue #5),
# the sm80-class GEMM forced at 4096^3 / 8192^3 against the mma.sync ceiling timed in the
# same run and cuBLAS (#3), and the sm90a GEMM's key shapes against cuBLAS and Triton (#4).
# Compiles first (in parallel), then each benchmark alone on the GPU.
. tools/device-preamble.sh  # environment, log, GPU
nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,power.limit --format=csv
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80"
timeout 250 $B $P --prewarm 4 --prewarm-only > "$out/prewarm.txt" 2>&1 &
p1=$!
timeout 250 python3 -m nbkernels.matmul.bench_hopper --prewarm-only > "$out/prewarm_h.txt" 2>&1 &
p2=$!
timeout 300 python3 -m nbkernels.rows.bench --json "$out/rows_h100.json" > "$out/rows.txt" 2>&1
echo "rows bench rc=$? at ${SECONDS}s"
grep -v "^ *$" "$out/rows.txt" | tail -n 22 | cut -c1-200
wait $p1 $p2
echo "prewarm done at ${SECONDS}s"
timeout 120 $B $P --json "$out/sm80_h100.json" > "$out/sm80.txt" 2>&1
echo "sm80 bench rc=$? at ${SECONDS}s"
grep -v "^ *$" "$out/sm80.txt" | tail -n 14 | cut -c1-200
left=$((585 - SECONDS))
[ $left -gt 40 ] && timeout $left python3 -m nbkernels.matmul.bench_hopper \
    --json "$out/hopper_h100.json" > "$out/hopper.txt" 2>&1
echo "bench_hopper rc=$? at ${SECONDS}s"
grep -v "^ *$" "$out/hopper.txt" | tail -n 12 | cut -c1-220
