#!/usr/bin/env bash
# Session 27 run A (perf-notes d7): the fast loader's column groups (mma_kernel.column_groups)
# for the 128x64 float64 tile's M-major a, which took the general per-chunk loader before.
# f64 with a transposed a (--layout cr: b N-major; cc: b K-major), at 2048^3, 4096^3 and 8192^3:
# the tree before (HEAD, under _ab/old), this tree's default (k-groups of 8 with an M-major a)
# and this tree with k-groups of 16 forced (spill-free now); two rounds, one process each,
# cuBLAS beside. Then tf32 (sm80 forced) with an M-major a on its 256x128 tile, old and new.
# Usage (device tool, carry .whl): bash tools/device_s27a.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
OLD=$(ab_tree _ab/old) NEW=$(ab_tree .)
K16="128,64,128,2,2,3,min_blocks=2,mma_k=16"
pids=""
for lay in cr cc; do
    ab_warm "$OLD" --dtypes f64 --sizes 2048 --layout $lay & pids="$pids $!"
    ab_warm "$NEW" --dtypes f64 --sizes 2048 --layout $lay & pids="$pids $!"
    ab_warm "$NEW" --dtypes f64 --sizes 2048 --layout $lay --tiles "$K16" & pids="$pids $!"
done
for side in OLD NEW; do
    ab_warm "${!side}" --dtypes f32 --precision tf32 --variant sm80 --sizes 2048 --layout cr &
    pids="$pids $!"
done
wait $pids  # not a bare wait: it would wait for the log tee too
echo "built at ${SECONDS}s"
for round in 1 2; do
    for lay in cr cc; do
        ab_bench "old_${lay}_$round" "$OLD" --dtypes f64 --sizes 2048,4096,8192 --layout $lay
        ab_bench "new_${lay}_$round" "$NEW" --dtypes f64 --sizes 2048,4096,8192 --layout $lay
        ab_bench "k16_${lay}_$round" "$NEW" --dtypes f64 --sizes 2048,4096,8192 --layout $lay \
            --tiles "$K16"
    done
done
for side in old new; do
    [ $side = old ] && D=$OLD || D=$NEW
    ab_bench "tf32_${side}_cr" "$D" --dtypes f32 --precision tf32 --variant sm80 \
        --sizes 4096,8192 --layout cr
done
echo "done at ${SECONDS}s"
