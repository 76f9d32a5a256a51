#!/usr/bin/env bash
# Session 32, run B (device tool, carry .whl and _ab; _ab/old = `git archive 0f415d3
# nbkernels tools`, the session's start; perf-notes r33): layer_norm's output pass as a rolled
# loop over the staged row. The layer_norm GPU tests, compute-sanitizer on its cases, the A/B
# (ab_rows_op), then Nsight Compute's stall counters on the new bf16 kernel at 8192^2.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
ab_rows_op layer_norm 10
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
M="$M,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum"
timeout 120 ncu --profile-from-start off --print-summary none --import-source no --metrics "$M" \
    python3 tools/profile_ncu.py rows 8192 8192 layer_norm rms > "$out/ncu_b.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
grep -E "^  [a-z_]+::|duration|dram__|issue_active|inst_executed|no_instruction|long_score|short_score|wait_per|barrier|not_selected" \
    "$out/ncu_b.txt" | sed -E 's/ {2,}/ /g' | cut -c1-110
echo "done at ${SECONDS}s"
