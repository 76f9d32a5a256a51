#!/usr/bin/env bash
# Session 15, run D (device tool, carry .whl), in two calls on one warm machine: the whole sm90a
# GPU file on the session's tree (the tensor-map store changes every sm90a call; the sources'
# hash changed, so the tiles are rebuilt first in parallel processes).
# Usage: bash tools/device_s15d.sh 1|2 [more configs to build before part 2, e.g. ,128x256x4k]
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=250"
sel="random_sweep_sm90a and not guarded and not offloaded"
if [ "$1" = 1 ]; then
    timeout 300 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
        --configs 128x128x6,256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p,128x256x4d2 2>&1 | tail -n 2
    left=$((${BUDGET:-570} - SECONDS))
    timeout -s ABRT $left $T -n 16 tests/test_gemm_sm90a_gpu.py -k "$sel" > /tmp/t.txt 2>&1
else
    timeout 300 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
        --configs 128x256x4g,128x128x6g,256x128x4g,256x128x4wg,64x128x4g,128x128x6pg,64x256x5pg,128x256x3o,128x128x4o,256x128x3o,256x128x3wo,64x128x4o,128x256x4c2,128x128x6c2,256x128x4wc2,128x128x6pc2,128x64x6c2,128x256x4gd2$2 2>&1 | tail -n 2
    left=$((${BUDGET:-570} - SECONDS))
    timeout -s ABRT $left $T -n 16 tests/test_gemm_sm90a_gpu.py -k "not ($sel)" > /tmp/t.txt 2>&1
fi
echo "pytest rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -12
cp /tmp/t.txt "${OUT:-/tmp}/t$1.txt"
