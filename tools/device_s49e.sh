# Session 49, run E (perf-notes r53): layer_norm's rows that leave threads partial or idle
# summed twice. This tree's layer_norm GPU tests (while the trees compile), three trees, two
# rounds, layer_norm in bf16, f16 and f32: 7ab10db (old), this tree (new), t2all (new with
# two_sums for whole rows too); then compute-sanitizer on the register-row and whole-warp cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16,f32 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,32768x4000,16384x5000,131072x768"
export AB_TREES="old:_ab/old new:. t2all:_ab/t2all"
ab_trees_warm layer_norm
gpu_tests 150 140 t_ln.txt -n 14 tests/test_rows_gpu.py -k "layer_norm"
ab_rows_warm_wait
ROUNDS=2 ab_trees_rounds layer_norm
row_sanitizer regs
row_sanitizer warps
echo "all done at ${SECONDS}s"
