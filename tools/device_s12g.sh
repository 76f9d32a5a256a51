#!/usr/bin/env bash
# Session 12, run 7 (device tool, carry .whl): speed, SM clock and power from the first
# milliseconds after 2 s idle to 3 s of back-to-back calls, bf16 8192^3 and 4096^3: cuBLAS,
# the sm80-class kernel, the sm90a default and the mma.sync ceiling (tools/clock_regimes.py).
. tools/device-preamble.sh  # environment, log, GPU
timeout 200 python3 -m nbkernels.matmul.bench --dtypes bf16 --sizes 4096 --variant sm80 \
    --prewarm 2 --prewarm-only > /tmp/p1.txt 2>&1 &
p1=$!
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --dtypes bfloat16 \
    --shapes 4096x4096x4096 > /tmp/p2.txt 2>&1 &
p2=$!
wait $p1 $p2
echo "prewarm done at ${SECONDS}s"
for n in 8192 4096; do
    timeout 150 python3 tools/clock_regimes.py $n 3
done
echo "done at ${SECONDS}s"
