#!/usr/bin/env bash
# Session 26 run K (perf-notes v9): the sm80-class kernel with each k-tile's refill after its
# first k-step (this tree) against before (e33d038's kernel under _ab/old), sm80
# forced, bf16 / f16 / int8 at 4096^3 and 8192^3, one tree a process, two rounds, cuBLAS and
# the mma.sync ceiling beside.
# Usage (device tool, carry .whl): bash tools/device_s26k.sh
. tools/device-preamble.sh  # environment, log, GPU
OLD=$PWD/_ab/old  # python -m puts the working directory first on sys.path: run from there
ARGS="--variant sm80 --dtypes bf16,f16,s8 --sizes 4096,8192"
pids=""
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD NBKERNELS_CACHE_DIR=/tmp/nbk-old timeout 300 \
    python3 -m nbkernels.matmul.bench $ARGS --prewarm 4 --prewarm-only > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
timeout 300 python3 -m nbkernels.matmul.bench $ARGS --prewarm 4 --prewarm-only \
    > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
echo "built at ${SECONDS}s"
for round in 1 2; do
    for side in old new; do
        if [ $side = old ]; then P=$OLD; C=/tmp/nbk-old; else P=$PWD; C=$NBKERNELS_CACHE_DIR; fi
        (cd "$P" && PYTHONPATH=/tmp/site:$P NBKERNELS_CACHE_DIR=$C timeout 200 \
            python3 -m nbkernels.matmul.bench $ARGS --json "$out/${side}_$round.json" \
            > "$out/${side}_$round.txt" 2>&1)
        echo "round $round $side rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/${side}_$round.json'))
print('   ', '  '.join(f\"{r['dtype']} {r['m']}: {r['nbk_tflops']:.0f} ({r['ratio']:.2f}x) e{r['relerr']:.0e}\" for r in rows))"
    done
done
echo "done at ${SECONDS}s"
