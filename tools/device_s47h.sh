# Session 47, run H: register rows that fill whole warps (perf-notes r46). The row GPU tests of
# the register layout and the automatic layouts at rows of 8192, compute-sanitizer on the
# layout's cases, then 16-bit rms_norm, layer_norm and softmax against d41f673 (_ab/old,
# running this tree's rows_ab_quick), two rounds, at 8192^2 and rows of 5120 and 7168.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,16384x5120,16384x7168"
ab_rows_warm rms_norm,layer_norm,softmax
gpu_tests 170 160 t_rows.txt -n 14 tests/test_rows_gpu.py -k "regs or layout_follows or 8192 or 8191 or 5000 or 4097"
ab_rows_warm_wait
row_sanitizer regs
ROUNDS=2 ab_rows_rounds rms_norm,layer_norm,softmax
echo "done at ${SECONDS}s"
