#!/usr/bin/env bash
# Session 43, run A (H200; carry .whl): the split tail's pieces form (perf-notes s29).
#  1. the default tile and 128x256x4ke2 (the split tail with the default's deferred stores)
#     built for bf16 and f16;
#  2. both beside cuBLAS in one bench process (the bench checks each result against cuBLAS's),
#     at 4096^3, 8192x8192x1024 and 8192^3, bf16 and f16; a second process the same.
. tools/device-preamble.sh
timeout 200 python3 - <<'PY'
import time
from nbkernels.matmul import bench_hopper as bh, wgmma_config as wc
t = time.time()
n = bh.prewarm([wc.DEFAULT, bh.parse_config("128x256x4ke2")], layouts=((True, False),))
print(f"prewarmed {n} builds in {time.time() - t:.0f} s", flush=True)
PY
for p in 1 2; do
    echo "--- process $p at ${SECONDS}s"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 \
        --shapes 4096,8192x8192x1024,8192 --configs 128x256x4ke2 --json "$out/a$p.json" 2>&1 \
        | grep -v Warning | tail -n 8
done
python3 - "$out"/a1.json "$out"/a2.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path)):
        sk = r["nbk[128x256x4ke2]"]
        print(f"{path[-7:]} {r['dtype']:8s} {r['m']}x{r['n']}x{r['k']}: default {r['nbk']:.1f} "
              f"split {sk:.1f} cuBLAS {r['cublas']:.1f}  split/default {sk / r['nbk']:.4f}  "
              f"default/cuBLAS {r['nbk'] / r['cublas']:.4f}  split/cuBLAS {sk / r['cublas']:.4f}  "
              f"err {r['nbk_err']:.1e} / {r['nbk[128x256x4ke2]_err']:.1e}")
PY
echo "done at ${SECONDS}s"
