# Session 49, run D (perf-notes r52): this tree's row GPU tests (the whole file, while the trees
# compile), then four trees, two rounds, 16-bit layer_norm and softmax: eeafbd0 (old), this
# tree (new: r51's rule), nf (new + layer_norm's bf16 output pass unpacking with PRMT and the
# opaque zero), nr (new + layer_norm's 32-element register rows at 48 registers); then
# compute-sanitizer on this tree's register-row cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,32768x3072,32768x4000,32768x2500"
export AB_TREES="old:_ab/old new:. nf:_ab/nf nr:_ab/nr"
ab_trees_warm layer_norm,softmax
gpu_tests 230 220 t_rows.txt -n 14 tests/test_rows_gpu.py
ab_rows_warm_wait
ROUNDS=2 ab_trees_rounds layer_norm,softmax
row_sanitizer regs
echo "all done at ${SECONDS}s"
