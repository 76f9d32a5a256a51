# Session 48, run A (perf-notes r47): rows on the fewest whole warps. The row GPU tests of the
# new widths (float32 rows of 3072, 5000, 5120 and 7168 staged; 16-bit ones with a residual and
# swiglu; a forced block of 96 looping), the repeat/replay tests (rows of 5120 and 8000 among
# them, never result-checked on a GPU before) and the layout rule; compute-sanitizer on the
# blocks of whole warps; then every op in bf16 and f32 against 3f6e5c0 (_ab/old, running this
# tree's rows_ab_quick), two rounds, at rows of 5120, 7168 and 5000.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 16384x5120,16384x7168,16384x5000"
OPS=rms_norm,rms_norm_residual,layer_norm,softmax,swiglu
ab_rows_warm $OPS
gpu_tests 200 190 t_rows.txt -n 12 tests/test_rows_gpu.py -k "repeat or replay or layout_follows or 5120 or 7168 or 3072 or 5000 or block96"
ab_rows_warm_wait
row_sanitizer warps
ROUNDS=2 ab_rows_rounds $OPS
echo "done at ${SECONDS}s"
