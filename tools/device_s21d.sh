#!/usr/bin/env bash
# Session 21, run D (device tool, carry .whl), in three calls: the whole sm90a GPU file on the
# session's tree (deferred stores; every staged tile's stores now through store_rows), each
# part's tiles built first in parallel processes for all four operand layouts.
# Usage: bash tools/device_s21d.sh 1|2|3
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=250"
. tools/sm90a-parts.sh
sm90a_part "$1"
timeout 330 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $cfgs 2>&1 | tail -n 2
left=$((${BUDGET:-575} - SECONDS))
timeout -s ABRT $left $T -n 16 tests/test_gemm_sm90a_gpu.py -k "$sel" > /tmp/t.txt 2>&1
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -12
cp /tmp/t.txt "${OUT:-/tmp}/t$1.txt"
