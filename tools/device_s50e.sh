# Session 50, run E (perf-notes r58): the row GPU tests of misaligned, padded and strided rows,
# streams and in-place calls (this tree: the padded copies by rows/padcopy.py's kernel), while
# both trees compile; run D's tree (m2d: cuMemcpy2DAsync) against this one at rows whose 16-bit
# width is no multiple of 8, two rounds; then, measurement only, this tree's 16-bit rows on a
# warp under each NBKERNELS_ROWS_LOOP.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16 AB_ROWS_ARGS="--sizes 32768x2500,262144x197,4096x50257"
export AB_TREES="m2d:_ab/m2d new:."
OPS=softmax,layer_norm,rms_norm_residual
ab_trees_around $OPS 200 180 t_rows.txt -n 15 tests/test_rows_gpu.py \
    tests/test_array_streams_gpu.py -k "$PADDED_ROW_TESTS"
for mode in "" 0 1 4; do
    echo "--- NBKERNELS_ROWS_LOOP=$mode"
    NBKERNELS_ROWS_LOOP=$mode timeout 100 python3 tools/rows_ab_quick.py --ops layer_norm,softmax,rms_norm \
        --dtypes bf16 --sizes 131072x768,98304x1024 2>&1 | grep "of copy"
done
echo "all done at ${SECONDS}s"
