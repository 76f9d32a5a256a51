#!/usr/bin/env bash
# Session 8, run 1: (1) where a small call's host time goes, piece by piece
# (tools/host_parts.py, perf-notes r9); (2) ncu of the bf16 row kernels at 8192 x 8192 (speed
# of light, warp states, memory, schedulers, per-instruction stall samples of rms_norm);
# (3) the copy bandwidth at the row benchmark's byte counts against the 1 GiB copy it is
# judged by.
. tools/device-preamble.sh  # environment, log, GPU
for op in rms layer_norm softmax; do  # build the kernels in parallel (cold cache)
    timeout 200 python3 tools/profile_ncu.py rows 8192 8192 $op > "$out/warm_$op.txt" 2>&1 &
    pids="$pids $!"
done
timeout 200 python3 -c "
import cupy, nbkernels
from nbkernels.arrays import BF16
a = cupy.ones((128, 128), BF16)
nbkernels.gemm(a, a); nbkernels.gemm(a, a, out=cupy.empty_like(a))" > "$out/warm_gemm.txt" 2>&1 &
wait $pids $!  # not a bare wait: it would wait for the log tee too
echo "warm done at ${SECONDS}s"; tail -n 3 "$out"/warm_*.txt
timeout 200 python3 tools/host_parts.py
echo "host parts done at ${SECONDS}s"
timeout 100 python3 - <<'PY'
import cupy
from nbkernels.rows.bench import time_events
for mib in (32, 128, 256, 1024):
    src = cupy.ones(mib << 18, cupy.float32); dst = cupy.empty_like(src)
    t, _ = time_events(lambda: dst.__setitem__(Ellipsis, src), [()], 20)
    print(f"copy {mib} MiB: {2 * src.nbytes / t / 1e9:.0f} GB/s ({t * 1e6:.1f} us)")
PY
timeout 150 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy \
    --section LaunchStats -o "$out/rows" \
    python3 tools/profile_ncu.py rows 8192 8192 rms layer_norm softmax > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/rows.ncu-rep" --page details --print-summary none > "$out/details.txt" 2>&1
grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Warp Cycles|Issued|Registers|Achieved Occ|Eligible|No Eligible|Stall|Block Limit" \
    "$out/details.txt" | cut -c1-120 | head -90
timeout 60 ncu -i "$out/rows.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src_rows.csv.gz"
rm -f "$out/rows.ncu-rep"
echo "done at ${SECONDS}s"
