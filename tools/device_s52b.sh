# Session 52, run B (perf-notes r63): run A again with the repeat path's remembered launches
# cleared between variants (run A timed the first variant's launch under every label), then
# Nsight Compute on one launch of the lanes layout at bf16 262144 x 200 (as run D of session
# 51 profiled the warp loop there: tools/device_s51d.sh).
. tools/device-preamble.sh
(cd tools && timeout 330 python3 softmax_lanes_ab.py --dtypes bf16,f32 \
    --json "$out/lanes_s52b.json" 2>&1 | grep -v Warning)
timeout 150 ncu --profile-from-start off --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section LaunchStats --metrics smsp__inst_executed.sum \
    python3 tools/profile_ncu.py rows 262144 200 softmax 2>&1 | grep -E \
    "Duration|inst_executed|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Stall|Memory Throughput|Compute \(SM\)|Warp Cycles Per Issued" | head -30
echo "all done at ${SECONDS}s"
