# Session 47, run G: the register-row layout after r44's fixes (perf-notes r45). The whole row
# GPU file, compute-sanitizer on the layout's cases, then rms_norm, layer_norm and softmax in
# 16 bits against d41f673 (_ab/old, running this tree's rows_ab_quick), two rounds, with rows
# of 5120 beside the sizes.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,16384x5120,32768x4096"
ab_rows_warm rms_norm,layer_norm,softmax
gpu_tests 330 300 t_rows.txt -n 14 tests/test_rows_gpu.py
ab_rows_warm_wait
row_sanitizer regs
ROUNDS=2 ab_rows_rounds rms_norm,layer_norm,softmax
echo "done at ${SECONDS}s"
