#!/usr/bin/env bash
# Session 26 run D (perf-notes d6): the float64 kernel before (tree 18d0a3e, unpacked under
# _ab/old by the caller) and after the refill move, alternated in two rounds, at 2048^3,
# 4096^3 and 8192^3 with 4 (default) and 3 stages, cuBLAS DGEMM in each process.
# Usage (device tool, carry .whl): bash tools/device_s26d.sh
. tools/device-preamble.sh  # environment, log, GPU
TILES="default;128,64,128,2,2,3,8,2"
NEW=$PWD
OLD=$PWD/_ab/old  # python -m puts the working directory first on sys.path: run from there
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD NBKERNELS_CACHE_DIR=/tmp/nbk-old timeout 200 \
    python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --tiles "$TILES" --prewarm 4 \
    --prewarm-only > "$out/warm_old.txt" 2>&1)
echo "old built rc=$? at ${SECONDS}s"
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD python3 -c "import nbkernels.matmul.dmma_kernel as d; print('old side:', d.__file__, 'first piece' in open(d.__file__).read())")
for round in 1 2; do
    for side in old new; do
        if [ $side = old ]; then P=$OLD; C=/tmp/nbk-old; else P=$NEW; C=$NBKERNELS_CACHE_DIR; fi
        (cd "$P" && PYTHONPATH=/tmp/site:$P NBKERNELS_CACHE_DIR=$C timeout 150 \
            python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 --tiles "$TILES" \
            --json "$out/${side}_$round.json" > "$out/${side}_$round.txt" 2>&1)
        echo "round $round $side rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/${side}_$round.json'))
for r in rows: print(f\"    {r['m']:5d} {r['plan_tile']:22s} {r['nbk_tflops']:5.1f} / {r['cublas_tflops']:5.1f} = {r['ratio']:.3f}\")"
    done
done
echo "done at ${SECONDS}s"
