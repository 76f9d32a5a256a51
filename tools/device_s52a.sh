# Session 52, run A (perf-notes r63): softmax's lanes layout (several short rows a warp)
# against the staged warp loop, fixed lane counts and torch eager (tools/softmax_lanes_ab.py),
# then this tree's softmax GPU tests (short rows now take the lanes layout by themselves).
. tools/device-preamble.sh
. tools/ab-lib.sh
(cd tools && timeout 330 python3 softmax_lanes_ab.py --dtypes bf16,f32 \
    --json "$out/lanes_s52a.json" 2>&1 | grep -v Warning)
gpu_tests 200 180 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
echo "all done at ${SECONDS}s"
