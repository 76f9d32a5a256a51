#!/usr/bin/env bash
# Session 10, run 3: why layer_norm bf16 at 8192^2 lost 6 points of copy with r12 (session 9):
# Nsight Compute (full set) on layer_norm and rms_norm bf16 8192 x 8192, this tree against the
# tree before r12 (ab_old/: `git archive 4f6dba7 nbkernels`, untracked, carried): headline
# metrics and the warp-stall reasons per issued instruction, side by side.
. tools/device-preamble.sh  # environment, log, GPU
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
NCU="ncu --profile-from-start off --print-summary none --import-source no --set full"
for tree in new old; do
    pp=$PWD
    [ $tree = old ] && pp=$PWD/ab_old
    PYTHONPATH=$pp:$PYTHONPATH timeout 150 python3 tools/profile_ncu.py rows 8192 8192 layer_norm rms \
        > "$out/warm_$tree.txt" 2>&1 || echo "warm $tree rc=$?"
    PYTHONPATH=$pp:$PYTHONPATH timeout 200 $NCU -o "$out/ln_$tree" python3 tools/profile_ncu.py \
        rows 8192 8192 layer_norm rms > "$out/ncu_$tree.txt" 2>&1
    echo "ncu $tree rc=$? at ${SECONDS}s"
    ncu -i "$out/ln_$tree.ncu-rep" --page raw --csv 2>/dev/null > "$out/raw_$tree.csv"
    ncu -i "$out/ln_$tree.ncu-rep" --page details --print-summary none 2>&1 | grep -E \
        "^  [a-zA-Z_]|Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Executed Instructions  |Registers Per|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Eligible Warps|Active Warps Per|Block Limit" \
        | cut -c1-110 > "$out/details_$tree.txt"
    rm -f "$out/ln_$tree.ncu-rep"
done
paste -d'|' "$out/details_old.txt" "$out/details_new.txt" | awk -F'|' '{printf "%-60s | %s\n", substr($1,1,60), substr($2,1,60)}'
python3 - "$out" <<'PY'
import csv, sys
from pathlib import Path
def load(t):
    rows = list(csv.reader(open(Path(sys.argv[1]) / f"raw_{t}.csv")))
    head, data = rows[0], rows[2:]
    return head, data
for t in ("old", "new"):
    head, data = load(t)
    names = [i for i, h in enumerate(head) if
             "average_warps_issue_stalled" in h and h.endswith("per_issue_active.ratio")]
    kn = head.index("Kernel Name")
    for r in data:
        vals = sorted(((float(r[i] or 0), head[i]) for i in names), reverse=True)[:9]
        print(t, r[kn][:40], " ".join(f"{h.split('stalled_')[1].split('_per')[0]}={v:.2f}" for v, h in vals))
PY
echo "done at ${SECONDS}s"
