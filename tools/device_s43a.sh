#!/usr/bin/env bash
# Session 43, run A (H200; carry .whl): the split tail's pieces form (perf-notes s29).
#  1. the default tile and 128x256x4ke2 (the split tail with the default's deferred stores)
#     built for bf16 and f16;
#  2. both beside cuBLAS in one bench process (the bench checks each result against cuBLAS's),
#     at 4096^3, 8192x8192x1024 and 8192^3, bf16 and f16; a second process the same.
. tools/device-preamble.sh
# (as run, the prewarm was inline Python read from stdin, which multiprocessing's spawn
# cannot re-import: it failed and the bench compiled in line)
timeout 200 python3 tools/prewarm_sm90a.py --kinds bf16,f16 default 128x256x4ke2
for p in 1 2; do
    echo "--- process $p at ${SECONDS}s"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper --no-triton --no-sm80 \
        --shapes 4096,8192x8192x1024,8192 --configs 128x256x4ke2 --json "$out/a$p.json" 2>&1 \
        | grep -v Warning | tail -n 8
done
python3 tools/bench_pair.py 128x256x4ke2 "$out"/a1.json "$out"/a2.json
echo "done at ${SECONDS}s"
