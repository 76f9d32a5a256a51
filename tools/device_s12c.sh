#!/usr/bin/env bash
# Session 12, run 3 (device tool, carry .whl): (1) the sm80 benchmark with the mma.sync
# ceiling as a job of its own, unsettled and settled (0.3 s), bf16 / f16 at 4096^3 and
# 8192^3; the ceiling alone after 2 s idle; (2) ncu at 8192x8192x1024 bf16, the sm90a default
# and cuBLAS, per-SASS-instruction stall samples (gzipped CSV to $OUT; at most 8 files return).
. tools/device-preamble.sh  # environment, log, GPU
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80"
pids=""
timeout 200 $B $P --prewarm 4 --prewarm-only > /tmp/prewarm.txt 2>&1 &
pids="$pids $!"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --shapes 8192x8192x1024 \
    --dtypes bfloat16 > /tmp/prewarm_h.txt 2>&1 &
pids="$pids $!"
wait $pids
echo "prewarm: $(tail -n 1 /tmp/prewarm.txt) / $(tail -n 1 /tmp/prewarm_h.txt) at ${SECONDS}s"
timeout 60 python3 - <<'PY'
import time, cupy
from nbkernels.matmul.ceiling import Ceiling
for kind in ("bf16", "f16"):
    job = Ceiling(kind, 2.0 * 8192 ** 3)
    job(); cupy.cuda.Device().synchronize()
    time.sleep(2)
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    s.record(); job(); e.record(); e.synchronize()
    t = cupy.cuda.get_elapsed_time(s, e) * 1e-3
    print(f"ceiling {kind} after 2 s idle, one call of {job.flops / 1e12:.2f} TFLOP: "
          f"{job.flops / t / 1e12:.0f} TFLOPS")
PY
for round in 1 2; do
    for settle in 0 0.3; do
        timeout 100 $B $P --settle $settle --json "$out/bench_${settle}_$round.json" \
            > /tmp/bench.txt 2>&1
        echo "bench settle $settle round $round rc=$? at ${SECONDS}s"
        grep -E "^heuristic" /tmp/bench.txt | sed 's/^heuristic *//' | cut -c1-200
    done
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_*.json
timeout 120 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -o /tmp/g python3 tools/profile_ncu.py gemm 8192x8192x1024 > /tmp/ncu_run.txt 2>&1
echo "ncu rc=$? at ${SECONDS}s"; tail -n 3 /tmp/ncu_run.txt
timeout 60 ncu -i /tmp/g.ncu-rep --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src_shortk.csv.gz"
ls -la "$out"
echo "done at ${SECONDS}s"
