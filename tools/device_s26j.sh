#!/usr/bin/env bash
# Session 26 run J (perf-notes d6): the float64 kernel with an M-major a (k-groups of 8, its
# k-loop as before the session) at 3 stages (the default since 36aba02) and 4, one tile a
# process, two rounds, at 2048^3, 4096^3 and 8192^3, cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s26j.sh
. tools/device-preamble.sh  # environment, log, GPU
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --layout cr \
    --tiles "default;128,64,128,2,2,4,8,2" --prewarm 2 --prewarm-only > "$out/warm.txt" 2>&1
echo "built at ${SECONDS}s"
for round in 1 2; do
    for t in default "128,64,128,2,2,4,8,2"; do
        timeout 150 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 \
            --layout cr --tiles "$t" --json "$out/r$round.json" > "$out/r$round.txt" 2>&1
        echo "round $round $t rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/r$round.json'))
print('   ', '  '.join(f\"{r['m']}: {r['nbk_tflops']:.1f}/{r['cublas_tflops']:.1f} = {r['ratio']:.3f}\" for r in rows), rows[0]['plan_tile'])"
    done
done
echo "done at ${SECONDS}s"
