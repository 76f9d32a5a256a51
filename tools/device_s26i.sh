#!/usr/bin/env bash
# Session 26 run I (perf-notes d6): the float64 kernel with an M-major a (k-groups of 8), the
# refill after the first group, against tree 18d0a3e (under _ab/old, given this tree's bench.py
# for its --layout), one tree a process, two rounds, at 2048^3, 4096^3 and 8192^3, cuBLAS
# beside; then the f64 GPU file, the intrinsics and compute-sanitizer on the final code.
# Usage (device tool, carry .whl): bash tools/device_s26i.sh
. tools/device-preamble.sh  # environment, log, GPU
OLD=$PWD/_ab/old  # python -m puts the working directory first on sys.path: run from there
pids=""
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD NBKERNELS_CACHE_DIR=/tmp/nbk-old timeout 200 \
    python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --layout cr --prewarm 1 \
    --prewarm-only > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --layout cr \
    --prewarm 1 --prewarm-only > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
echo "built at ${SECONDS}s"
for round in 1 2; do
    for side in old new; do
        if [ $side = old ]; then P=$OLD; C=/tmp/nbk-old; else P=$PWD; C=$NBKERNELS_CACHE_DIR; fi
        (cd "$P" && PYTHONPATH=/tmp/site:$P NBKERNELS_CACHE_DIR=$C timeout 150 \
            python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 --layout cr \
            --json "$out/${side}_$round.json" > "$out/${side}_$round.txt" 2>&1)
        echo "round $round $side rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/${side}_$round.json'))
print('   ', '  '.join(f\"{r['m']}: {r['nbk_tflops']:.1f}/{r['cublas_tflops']:.1f} = {r['ratio']:.3f} e{r['relerr']:.0e}\" for r in rows), rows[0]['plan_tile'])"
    done
done
bash tools/device_f64.sh default
echo "done at ${SECONDS}s"
