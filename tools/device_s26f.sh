#!/usr/bin/env bash
# Session 26 run F (perf-notes d6): one (tree, tile) per process, so that no configuration
# is timed after another at the same size: the kernel before (tree 18d0a3e under _ab/old,
# 4 stages) and this tree with 3 and 4 stages, alternated in two rounds, at 2048^3, 4096^3
# and 8192^3, cuBLAS DGEMM in each process. Kernels already built (runs D / E).
# Usage (device tool, carry .whl): bash tools/device_s26f.sh
. tools/device-preamble.sh  # environment, log, GPU
OLD=$PWD/_ab/old
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD NBKERNELS_CACHE_DIR=/tmp/nbk-old timeout 200 \
    python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --prewarm 1 --prewarm-only \
    > "$out/warm_old.txt" 2>&1)
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 \
    --tiles "default;128,64,128,2,2,4,8,2" --prewarm 2 --prewarm-only > "$out/warm_new.txt" 2>&1
echo "built at ${SECONDS}s"
for round in 1 2; do
    for side in old new3 new4; do
        case $side in
            old) P=$OLD; C=/tmp/nbk-old; T=default ;;
            new3) P=$PWD; C=$NBKERNELS_CACHE_DIR; T=default ;;
            new4) P=$PWD; C=$NBKERNELS_CACHE_DIR; T="128,64,128,2,2,4,8,2" ;;
        esac
        (cd "$P" && PYTHONPATH=/tmp/site:$P NBKERNELS_CACHE_DIR=$C timeout 150 \
            python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 --tiles "$T" \
            --json "$out/${side}_$round.json" > "$out/${side}_$round.txt" 2>&1)
        echo "round $round $side rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/${side}_$round.json'))
print('   ', '  '.join(f\"{r['m']}: {r['nbk_tflops']:.1f}/{r['cublas_tflops']:.1f} = {r['ratio']:.3f}\" for r in rows), rows[0]['plan_tile'])"
    done
done
echo "done at ${SECONDS}s"
