#!/usr/bin/env bash
# Session 12, run 6 (device tool, carry .whl; ab_old/ = the tree before the CuPy launch
# wrapper, untracked): (1) the repeat / replay / stream GPU tests of the GEMM and the rows on
# this tree; (2) small-call host time, ab_old/ against this tree, three rounds alternated.
. tools/device-preamble.sh  # environment, log, GPU
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 8 -o faulthandler_timeout=200"
timeout -s ABRT 240 $T tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    -k "repeat or replay or stream or place or thread" > /tmp/t.txt 2>&1
echo "tests rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -10
for round in 1 2 3; do
    echo "--- host round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 60 python3 ../tools/host_parts.py --calls)
    echo "--- host round $round: this tree"
    timeout 60 python3 tools/host_parts.py --calls
done
echo "done at ${SECONDS}s"
