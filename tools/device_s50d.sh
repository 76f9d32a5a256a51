# Session 50, run D (perf-notes r57): the row GPU tests of misaligned, padded and strided rows,
# streams and in-place calls (this tree: the padded copies as cuMemcpy2DAsync) and the array
# stream tests, while both trees compile; then the session's start (old) against this tree at
# rows whose 16-bit width is no multiple of 8, two rounds.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16 AB_ROWS_ARGS="--sizes 32768x2500,262144x197,4096x50257"
export AB_TREES="old:_ab/old new:."
OPS=softmax,layer_norm,rms_norm_residual
ab_trees_around $OPS 200 180 t_rows.txt -n 15 tests/test_rows_gpu.py \
    tests/test_array_streams_gpu.py -k "$PADDED_ROW_TESTS"
echo "all done at ${SECONDS}s"
