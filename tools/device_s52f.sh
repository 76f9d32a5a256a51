# Session 52, run F (perf-notes r63): rms_norm's lanes layout (with and without a residual)
# against its staged layouts, fixed lane counts and torch eager (tools/softmax_lanes_ab.py
# --ops), then this tree's rms_norm GPU tests and compute-sanitizer on the lanes cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
(cd tools && timeout 210 python3 softmax_lanes_ab.py --ops rms_norm,rms_norm_residual \
    --dtypes bf16,f32 --sizes 262144x200,262144x64,131072x500,65536x768,65536x1024 \
    --json "$out/lanes_s52f.json" 2>&1 | grep -v Warning)
gpu_tests 190 170 t_rows.txt -n 15 tests/test_rows_gpu.py -k "rms_norm"
sanitizers 80 "tools/sanitize_rows.py lanes"
echo "all done at ${SECONDS}s"
