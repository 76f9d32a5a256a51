# Session 47, run F: the register-row layout (perf-notes r43) on the H200. The whole row GPU
# file, compute-sanitizer on the layout's edge cases, then the 16-bit rms_norm, layer_norm and
# softmax against the session's starting tree (_ab/old), alternated twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16
ab_rows_warm rms_norm,layer_norm,softmax
gpu_tests 330 300 t_rows.txt -n 14 tests/test_rows_gpu.py
ab_rows_warm_wait
row_sanitizer regs
ROUNDS=2 ab_rows_rounds rms_norm,layer_norm,softmax
echo "done at ${SECONDS}s"
