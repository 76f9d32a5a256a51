# Session 52, run D (perf-notes r63): the committed lanes layout. The whole row GPU file and
# the streams file (every op: Call.config and run_phases changed for all), the softmax and
# validate cases of the DLPack and validate files; then rows.bench with torch eager and CuPy
# at softmax's short rows, and (measurement for what comes next) rms_norm and layer_norm at
# the same short rows and at model widths of 768 and 1024.
. tools/device-preamble.sh
. tools/ab-lib.sh
gpu_tests 330 300 t_rows.txt -n 15 tests/test_rows_gpu.py tests/test_array_streams_gpu.py \
    tests/test_dlpack.py tests/test_validate.py
timeout 120 python3 -m nbkernels.rows.bench --ops softmax --dtypes bf16,f32 \
    --sizes 262144x197,262144x200,262144x64,131072x256,131072x500,65536x768,65536x1000 \
    --json "$out/rows_bench_s52d_softmax.json" 2>&1 | grep -v Warning | tail -16
timeout 100 python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm --dtypes bf16 \
    --sizes 262144x200,65536x768,65536x1024 \
    --json "$out/rows_bench_s52d_norms.json" 2>&1 | grep -v Warning | tail -8
echo "all done at ${SECONDS}s"
