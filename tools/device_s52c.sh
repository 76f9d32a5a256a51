# Session 52, run C (perf-notes r63): the lanes layout's second form (slots past a row -inf,
# one path a warp) against the staged warp loop, fixed lane counts and torch eager; Nsight
# Compute on one launch at bf16 262144 x 200; this tree's softmax GPU tests (the lanes cases
# among them); compute-sanitizer on the lanes cases; validate --as sm_80 on softmax (the PTX an
# A100 receives, driver-JIT here: its 300 x 100 and 300 x 197 take the lanes layout).
. tools/device-preamble.sh
. tools/ab-lib.sh
(cd tools && timeout 200 python3 softmax_lanes_ab.py --dtypes bf16,f32 \
    --json "$out/lanes_s52c.json" 2>&1 | grep -v Warning)
timeout 120 ncu --profile-from-start off --section SpeedOfLight --section Occupancy \
    --section LaunchStats --metrics smsp__inst_executed.sum \
    python3 tools/profile_ncu.py rows 262144 200 softmax 2>&1 | grep -E \
    "Duration|inst_executed|Achieved Occupancy|Registers Per|Grid Size|Memory Throughput|Compute \(SM\)" | head -12
gpu_tests 200 180 t_rows.txt -n 15 tests/test_rows_gpu.py -k softmax
row_sanitizer lanes
timeout 150 python3 -m nbkernels validate --as sm_80 --only 'rows/softmax/*' 2>&1 | tail -n 8
echo "validate rc=$? at ${SECONDS}s"
echo "all done at ${SECONDS}s"
