#!/usr/bin/env bash
# Session 13, run 1 (device tool, carry .whl): every GPU test of the tree in one call, in 16
# processes (compiling is what takes the time on a fresh machine; the processes share the
# kernel cache, so a kernel one of them built is read from disk by the others), then the demo.
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 16 -o faulthandler_timeout=400"
timeout -s ABRT ${LIMIT:-520} $T tests -m gpu --durations=12 > /tmp/t.txt 2>&1
echo "tests rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -20
sed -n '/slowest/,/^$/p' /tmp/t.txt | head -16
cp /tmp/t.txt "$out/tests.txt"
timeout 60 python3 -m nbkernels demo 2>&1 | tail -n 6
echo "done at ${SECONDS}s"
