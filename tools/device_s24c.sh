#!/usr/bin/env bash
# Session 24, run C (device tool, carry .whl): the row benchmark on the final rows
# (`python -m nbkernels.rows.bench`: % of copy, torch eager and CuPy beside, small calls
# against an empty launch), after one warm-up process per op and dtype fills the disk cache.
. tools/device-preamble.sh
pids=""
for d in bf16 f32; do
    for op in rms_norm layer_norm softmax swiglu; do
        timeout 200 python3 tools/rows_ab_quick.py --ops $op --dtypes $d --reps 1 \
            > "$out/warm_${op}_$d.txt" 2>&1 &
        pids="$pids $!"
    done
    # rms_norm with a residual is its own build
    timeout 200 python3 -c "
import cupy, nbkernels
from nbkernels.rows import bench
x = cupy.ones((64, 4096), bench.dtype_named('$d'))
nbkernels.rms_norm(x, x[0], residual=x.copy()); cupy.cuda.runtime.deviceSynchronize()" \
        > "$out/warm_resid_$d.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids
echo "warm-up done at ${SECONDS}s"
timeout ${BENCH_S:-420} python3 -m nbkernels.rows.bench --dtypes bf16,f32 --json "$out/rows_bench.json" 2>&1 \
    | grep -v Warning
echo "bench done at ${SECONDS}s"
