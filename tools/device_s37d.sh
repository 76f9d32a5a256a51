#!/usr/bin/env bash
# Session 37, run D (carry .whl): the main job on today's code, on a fresh kernel cache and
# again with the cache it filled, with the toolchain doctor and the intrinsic probes.
. tools/device-preamble.sh
export NBKERNELS_CACHE_DIR=/tmp/nbk-demo-cache
rm -rf "$NBKERNELS_CACHE_DIR"
timeout 60 python3 -m nbkernels doctor 2>&1 | tail -n 25
for i in 1 2; do
    echo "--- demo, process $i"
    timeout 150 python3 -m nbkernels demo 2>&1 | tail -n 12
done
echo "--- demo --probes"
timeout 150 python3 -m nbkernels demo --probes 2>&1 | tail -n 8
