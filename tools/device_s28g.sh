#!/usr/bin/env bash
# Session 28, run G (device tool, carry .whl; perf-notes r19, an experiment, run on ab02158:
# its --ln-vec-global flag and the kernel switch were reverted after the run): layer_norm with
# its weight and bias read from global memory in the row loop (--ln-vec-global, a private
# kernel cache) against the shipped build, bf16 and float32 at the sizes: the
# automatic plan, a block per row, blocks of 2 and 4 rows, loops of 3-8 blocks an SM.
. tools/device-preamble.sh
args=(--ops layer_norm --dtypes bf16,f32 --per-sm 3,4,6,8 --rows-per-block yes)
for build in shipped vec-global; do
    extra=(); [ $build = vec-global ] && extra=(--ln-vec-global)
    echo "--- $build"
    timeout 280 python3 tools/rows_layout_sweep.py "${args[@]}" "${extra[@]}" \
        --json "$out/sweep_$build.json" 2>&1 | grep -v "^ *$" | tail -n 12
done
echo "done at ${SECONDS}s"
