#!/usr/bin/env bash
# Session 19, run E (device tool, carry .whl): clock and power of the epilogue knock-out builds
# against cuBLAS, sustained, at short K and 8192^3 (perf-notes s15: is the gain of a build
# without stores clock or work per clock?). Measurement only: stage and none compute wrong
# results.
. tools/device-preamble.sh
for shape in 8192x8192x1024 8192x8192x8192; do
    for v in full stage none; do
        timeout 100 python3 tools/knockout_clocks.py $v $shape 3 2>&1 | grep TFLOPS
    done
done
echo "done at ${SECONDS}s"
