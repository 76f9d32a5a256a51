# Session 51, run I (perf-notes r62; measurement only): softmax's split rows staged whole
# against torch eager and CuPy in one process (rows.bench), bf16 and float32.
. tools/device-preamble.sh
timeout 230 python3 -m nbkernels.rows.bench --ops softmax --dtypes bf16,f32 \
    --sizes 4096x50257,4096x50256,16384x20000 \
    --json "$out/rows_bench_s51i.json" 2>&1 | grep -v Warning | tail -20
echo "all done at ${SECONDS}s"
