# Session 51, run G (perf-notes r62): this tree's softmax GPU tests while both trees compile;
# split rows staged whole against the session's start (_ab/old), two rounds; compute-sanitizer
# on the shifted and whole-row cases (tools/sanitize_rows.py shifted).
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32
export AB_ROWS_ARGS="--sizes 4096x50256,4096x50257,16384x20000,16384x12000"
export AB_TREES="old:_ab/old new:."
ab_trees_around softmax 300 250 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
row_sanitizer shifted
echo "all done at ${SECONDS}s"
