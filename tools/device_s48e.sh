# Session 48, run E (perf-notes r48): layer_norm's register rows held packed. Its GPU tests,
# compute-sanitizer on the register-row cases, then layer_norm in bf16, f16 and f32 against
# 3c229df's package (_ab/old, this tree's rows_ab_quick), two rounds.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f16,f32 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,16384x5120,16384x7168,16384x5000"
ab_rows_warm layer_norm
gpu_tests 150 140 t_ln.txt -n 14 tests/test_rows_gpu.py -k "layer_norm"
ab_rows_warm_wait
sanitizers 60 "tools/sanitize_rows.py regs"
ROUNDS=2 ab_rows_rounds layer_norm
echo "done at ${SECONDS}s"
