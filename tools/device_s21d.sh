#!/usr/bin/env bash
# Session 21, run D (device tool, carry .whl), in three calls: the whole sm90a GPU file on the
# session's tree (deferred stores; every staged tile's stores now through store_rows), each
# part's tiles built first in parallel processes for all four operand layouts.
# Usage: bash tools/device_s21d.sh 1|2|3
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=250"
main="random_sweep_sm90a and not guarded and not offloaded and not deferred"
first="deferred or streamk or many_tiles or default_dispatch or fused_bias_gelu or splits_a_short"
case $1 in
1) cfgs=128x256x4,128x128x6e2,256x128x4e1,128x256x3e3,64x128x4e2,128x256x3d2e4,128x256x4k,128x256x4ke2,128x256x3o
   sel="$first" ;;
2) cfgs=128x128x6,256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p,128x256x4d2
   sel="$main" ;;
*) cfgs=128x256x4g,128x128x6g,256x128x4g,256x128x4wg,64x128x4g,128x128x6pg,64x256x5pg,128x256x4gd2,128x128x4o,256x128x3o,256x128x3wo,64x128x4o,128x256x4c2,128x128x6c2,256x128x4wc2,128x128x6pc2,128x64x6c2
   sel="not ($main) and not ($first)" ;;
esac
timeout 330 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $cfgs 2>&1 | tail -n 2
left=$((${BUDGET:-575} - SECONDS))
timeout -s ABRT $left $T -n 16 tests/test_gemm_sm90a_gpu.py -k "$sel" > /tmp/t.txt 2>&1
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -12
cp /tmp/t.txt "${OUT:-/tmp}/t$1.txt"
