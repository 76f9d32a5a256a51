# Session 51, run H (perf-notes r62, second form): this tree's softmax GPU tests while both
# trees compile; split rows staged whole (one online pass for the max and the sum) against the
# session's start (_ab/old, with this tree's rows_ab_quick.py: it prints a split size's missing
# plan), two rounds; compute-sanitizer on the shifted and whole-row cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32
export AB_ROWS_ARGS="--sizes 4096x50256,4096x50257,16384x20000"
export AB_TREES="old:_ab/old new:."
ab_trees_around softmax 300 250 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
row_sanitizer shifted
echo "all done at ${SECONDS}s"
