#!/usr/bin/env bash
# Session 32, run A (device tool, carry .whl; measurement only, perf-notes r32): the issue's
# row benchmark with the copy of each size's own bytes beside the 1 GiB copy (bf16, f32), then
# Nsight Compute's stall reasons and pipe use on bf16 softmax, rms_norm and layer_norm at
# 8192 x 8192 (one launch each after a warm-up).
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid
echo "warm-up done at ${SECONDS}s"
timeout ${BENCH_S:-220} python3 -m nbkernels.rows.bench --dtypes bf16,f32 \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
NCU="ncu --profile-from-start off --print-summary none --import-source no"
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
M="$M,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active"
M="$M,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active"
M="$M,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active"
timeout 200 $NCU --metrics "$M" python3 tools/profile_ncu.py rows 8192 8192 softmax rms \
    layer_norm > "$out/ncu_metrics.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
grep -vE "^==PROF==|Warning" "$out/ncu_metrics.txt" | awk '$NF != 0 && $NF != "0"' | head -150
echo "done at ${SECONDS}s"
