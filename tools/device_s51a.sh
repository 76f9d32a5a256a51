# Session 51, run A (perf-notes r59): this tree's softmax GPU tests (the shifted builds: rows
# that do not start 16-byte aligned, in place), while both trees compile; the session's start
# (_ab/old) against this tree at misaligned widths beside aligned controls, two rounds.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32
export AB_ROWS_ARGS="--sizes 262144x197,262144x200,32768x2500,32768x2504,4096x50257,4096x50256"
export AB_TREES="old:_ab/old new:."
ab_trees_around softmax 300 250 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
echo "all done at ${SECONDS}s"
