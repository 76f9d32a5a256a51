#!/usr/bin/env bash
# Session 21, run H (device tool, carry .whl): the staged epilogue without its alpha multiply
# (tools/epilogue_noalpha.py, measurement only) against the default, alternated twice, one
# process each, at short K and 4096^3 (perf-notes s18).
. tools/device-preamble.sh
B="--dtypes bfloat16,float16 --no-triton --no-sm80 --shapes ${SHAPES:-8192x8192x1024,4096x4096x4096}"
for round in 1 2; do
    timeout 150 python3 -m nbkernels.matmul.bench_hopper $B 2>&1 \
        | grep -E "cublas=" | cut -c1-120 | sed "s/^/default$round /"
    timeout 200 python3 tools/epilogue_noalpha.py $B 2>&1 \
        | grep -E "cublas=" | cut -c1-120 | sed "s/^/noalpha$round /"
    echo "round $round at ${SECONDS}s"
done
