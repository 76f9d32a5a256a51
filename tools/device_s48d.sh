# Session 48, run D (perf-notes r47): softmax f32 a block per row at rows of 4097-8192. Its GPU
# tests, then softmax f32 against 7f8035d (_ab/old, this tree's rows_ab_quick), two rounds;
# then the row benchmark with the torch and CuPy peers, bf16, f16 and f32, at the
# issue's two sizes and rows of 5120.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=f32 AB_ROWS_ARGS="--sizes 8192x8192,16384x8192,32768x4096,16384x5120,16384x7168,16384x5000"
ab_rows_warm softmax
gpu_tests 150 140 t_softmax.txt -n 14 tests/test_rows_gpu.py -k "softmax and (float32 or layout_follows)"
ab_rows_warm_wait
ROUNDS=2 ab_rows_rounds softmax
timeout 330 python3 -m nbkernels.rows.bench --dtypes bf16,f16,f32 --sizes 8192x8192,32768x4096,16384x5120 \
    --json "$out/rows_bench_h200_s48.json" 2>&1 | grep -v Warning
echo "done at ${SECONDS}s"
