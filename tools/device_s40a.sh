#!/usr/bin/env bash
# Planned first run of the session after 39 (H200; carry .whl; measurement, perf-notes
# s22-s24):
#  1. a K sweep at one and two rounds of the default tile (1536x2816 and 3072x2816: 132 and 264
#     tiles of 128x256 on 132 SMs, K = 512 ... 4096), ours beside cuBLAS in each process: per
#     round, the slope (a k-tile) and the intercept (what a tile and a launch cost besides);
#  2. the tile and deferral re-sweep on the new k-loop at the three shapes still below 1.0x
#     (4096^3, 8192^3, 8192x8192x1024), bf16 and f16, with 3-stage tiles deferring 3 or 4
#     chunks, and the ping-pong tiles with their k-loop now uniform (perf-notes s24), beside
#     depth 2, clusters of two and 192x192, cuBLAS and Triton in the same process.
. tools/device-preamble.sh
CFGS=128x256x3e3,128x256x3e4,128x256x3d2e4,128x256x4d2e2,128x128x6p,64x256x5p,128x256x4c2,192x192x3
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $CFGS > /dev/null 2>&1 &
warm=$!
KS="512 1024 2048 4096"
sizes=""
for mn in 1536x2816 3072x2816; do for k in $KS; do sizes="$sizes,${mn}x$k"; done; done
timeout 200 python3 -m nbkernels.matmul.bench --dtypes bf16 --sizes "${sizes#,}" --reps 30 \
    --json "$out/ksweep.json" > "$out/ksweep.txt" 2>&1
echo "k sweep rc=$? at ${SECONDS}s"
python3 - "$out/ksweep.json" <<'PY'
import json, sys
import numpy as np
rows = json.load(open(sys.argv[1]))
for mn in ("1536x2816", "3072x2816"):
    sel = [r for r in rows if f"{r['m']}x{r['n']}" == mn]
    if not sel:
        continue
    k = np.array([r["k"] for r in sel], float)
    for who in ("nbk", "cublas"):
        t = np.array([2 * r["m"] * r["n"] * r["k"] / r[f"{who}_tflops"] / 1e6 for r in sel])
        slope, icpt = np.polyfit(k / 64, t, 1)
        print(f"{mn} {who:6s}: " + " ".join(f"K{int(a)} {b:.2f}us" for a, b in zip(k, t))
              + f"  -> {slope:.4f} us a k-tile, intercept {icpt:.2f} us")
PY
wait $warm
echo "prewarmed at ${SECONDS}s"
timeout $((590 - SECONDS)) python3 -m nbkernels.matmul.bench_hopper --no-sm80 --json "$out/tiles.json" \
    --shapes 4096,8192,8192x8192x1024 --configs $CFGS 2>&1 | grep -v Warning | tail -n 24
echo "done at ${SECONDS}s"
