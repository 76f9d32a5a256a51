#!/usr/bin/env bash
# Session 40, run C (H200; carry .whl): where the ~1.2 us a launch that the K sweep of run A
# put between our one-round intercept and cuBLAS's goes (perf-notes s25). ncu, one launch each
# of ours (default tile) and cuBLAS at 1536x2816 (132 tiles: one a block) for K = 64 and 512:
# the kernel's own duration (launch latency outside it), the warp-state stalls (no_instruction:
# a cold instruction cache; long_scoreboard, barrier, wait) and the launch statistics.
. tools/device-preamble.sh
m="gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum"
for k in 64 512; do
    timeout 200 ncu --profile-from-start off --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --metrics "$m" --page raw --csv \
        python3 tools/profile_ncu.py gemm 1536x2816x$k > "$out/raw_$k.csv" 2> "$out/err_$k.txt"
    echo "ncu K=$k rc=$? at ${SECONDS}s"
    python3 - "$out/raw_$k.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, units, data = rows[0], rows[1], rows[2:]
want = [i for i, h in enumerate(head) if h == "Kernel Name" or h.startswith(("gpu__time", "sm__cycles",
        "smsp__inst_executed", "smsp__pcsamp", "smsp__average_warps_issue_stalled", "launch__registers", "launch__shared", "launch__grid",
        "launch__block", "smsp__average_warp"))]
for i in want:
    vals = [d[i][:40] for d in data]
    if any(v not in ("0", "") for v in vals) and not head[i].endswith(("_not_issued", ".pct")):
        print(f"{head[i][:70]:70s} " + " | ".join(vals))
PY
done
echo "done at ${SECONDS}s"
