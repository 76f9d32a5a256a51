# Session 51, run F (perf-notes r61; measurement only): softmax at the misaligned widths and
# their aligned controls against torch eager and CuPy (rows.bench), bf16 and float32.
. tools/device-preamble.sh
timeout 400 python3 -m nbkernels.rows.bench --ops softmax --dtypes bf16,f32 \
    --sizes 262144x197,262144x200,32768x2500,32768x2504,4096x50257,4096x50256 \
    --json "$out/rows_bench_s51f.json" 2>&1 | grep -v Warning | tail -40
echo "all done at ${SECONDS}s"
