# Session 51, run D (measurement only, perf-notes r60): what holds 16-bit softmax on short rows
# (262144 x 200: 34% of copy, a warp a row) against rows of 768 (85%, a warp a row): Nsight
# Compute's duration, instructions, occupancy and warp stall reasons of one launch each
# (tools/profile_ncu.py rows, bf16).
. tools/device-preamble.sh
prof() {
    echo "--- $*"
    timeout 150 ncu --profile-from-start off --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats --metrics \
        smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio \
        python3 tools/profile_ncu.py rows "$@" 2>&1 | grep -E \
        "stalled|Duration|Executed Ipc A|inst_executed|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Stall|Memory Throughput|Compute \(SM\)|Warp Cycles Per Issued|thread_inst" | head -60
}
python3 -c "import nbkernels" 2>/dev/null  # warm imports
prof 262144 200 softmax
prof 131072 768 softmax
echo "all done at ${SECONDS}s"
