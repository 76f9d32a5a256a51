#!/usr/bin/env bash
# Session 27 run G: the sm80-class kernel (forced) at 4096^3 and 8192^3, more samples of
# issue #3's 390 TFLOPS target (bf16, f16: three processes), and the tf32, 3xtf32 and int8
# timings not taken since session 26's refill move; cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s27g.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
pids=""
ab_warm "$PWD" --dtypes bf16,f16,s8 --variant sm80 --sizes 2048 & pids="$pids $!"
ab_warm "$PWD" --dtypes f32 --precision tf32 --variant sm80 --sizes 2048 & pids="$pids $!"
ab_warm "$PWD" --dtypes f32 --precision 3xtf32 --variant sm80 --sizes 2048 & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
echo "built at ${SECONDS}s"
for r in 1 2 3; do
    ab_bench "sm80_16bit_$r" "$PWD" --dtypes bf16,f16 --variant sm80 --sizes 4096,8192
done
ab_bench "sm80_s8" "$PWD" --dtypes s8 --variant sm80 --sizes 4096,8192
ab_bench "sm80_tf32" "$PWD" --dtypes f32 --precision tf32 --variant sm80 --sizes 4096,8192
ab_bench "sm80_3xtf32" "$PWD" --dtypes f32 --precision 3xtf32 --variant sm80 --sizes 4096,8192
echo "done at ${SECONDS}s"
