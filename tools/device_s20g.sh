#!/usr/bin/env bash
# Session 20, run G (device tool, carry .whl): the offloaded tiles' sweep on the final tree
# (their storers' 16-byte stores are evict-first too), after run F's part 2 stopped at its
# limit while still compiling.
. tools/device-preamble.sh
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 128x256x3o,128x128x4o,256x128x3o,256x128x3wo,64x128x4o 2>&1 | tail -n 1
timeout -s ABRT $((560 - SECONDS)) python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 16 \
    tests/test_gemm_sm90a_gpu.py -k "offloaded" > /tmp/t.txt 2>&1
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/t.txt | head -5
