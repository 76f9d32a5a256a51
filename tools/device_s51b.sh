# Session 51, run B (perf-notes r59, second form): this tree's softmax GPU tests while both
# trees compile; the session's start (_ab/old) against this tree at misaligned widths beside
# aligned controls and aligned split rows, two rounds; then compute-sanitizer on the shifted
# cases and the padded copies' kernel (tools/sanitize_rows.py shifted).
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32
export AB_ROWS_ARGS="--sizes 262144x197,262144x200,32768x2500,32768x2504,4096x50257,4096x50256,1024x262144"
export AB_TREES="old:_ab/old new:."
ab_trees_around softmax 300 250 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
row_sanitizer shifted
echo "all done at ${SECONDS}s"
