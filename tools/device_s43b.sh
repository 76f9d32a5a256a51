#!/usr/bin/env bash
# Session 43, run B (H200; carry .whl): the split tail's hand-off with acquire/release at GPU
# scope instead of cuda.threadfence() (fence.sc.gpu), perf-notes s29 after run A.
#  1. the default tile and 128x256x4ke2 beside cuBLAS in one bench process (builds in
#     parallel first), 4096^3 and 8192x8192x1024, bf16 and f16; a second process the same;
#  2. the main job on today's code: doctor, the demo on an empty kernel cache and again,
#     the intrinsic probes (the new gpu_handoff probe among them).
. tools/device-preamble.sh
for p in 1 2; do
    echo "--- process $p at ${SECONDS}s"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 $([ $p = 1 ] && echo --prewarm) \
        --shapes 4096,8192x8192x1024 --configs 128x256x4ke2 --json "$out/b$p.json" 2>&1 \
        | grep -v Warning | tail -n 5
done
python3 - "$out"/b1.json "$out"/b2.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path)):
        sk = r["nbk[128x256x4ke2]"]
        print(f"{path[-7:]} {r['dtype']:8s} {r['m']}x{r['n']}x{r['k']}: default {r['nbk']:.1f} "
              f"split {sk:.1f} cuBLAS {r['cublas']:.1f}  split/default {sk / r['nbk']:.4f}  "
              f"default/cuBLAS {r['nbk'] / r['cublas']:.4f}  split/cuBLAS {sk / r['cublas']:.4f}  "
              f"err {r['nbk_err']:.1e} / {r['nbk[128x256x4ke2]_err']:.1e}")
PY
echo "--- main job at ${SECONDS}s"
export NBKERNELS_CACHE_DIR=/tmp/nbk-demo-cache
rm -rf "$NBKERNELS_CACHE_DIR"
timeout 60 python3 -m nbkernels doctor 2>&1 | tail -n 12
for i in 1 2; do
    echo "--- demo, process $i at ${SECONDS}s"
    timeout 120 python3 -m nbkernels demo 2>&1 | tail -n 8
done
echo "--- demo --probes at ${SECONDS}s"
timeout 150 python3 -m nbkernels demo --probes 2>&1 | tail -n 6
echo "done at ${SECONDS}s"
