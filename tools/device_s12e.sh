#!/usr/bin/env bash
# Session 12, run 5 (device tool, carry .whl): (1) the whole sm90a GPU file and the whole row
# GPU file, 12 workers each (the kernel source of every sm90a tile changed: two more
# barriers; the row file's 657 cases ran past 330 s on one worker in run 1, compiling);
# (2) where the last microseconds of a small call could come from: the empty launch through
# CuPy's Cython wrapper and through ctypes, beside cuda-bindings (tools/host_parts.py).
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 12 -o faulthandler_timeout=250"
timeout -s ABRT 260 $T tests/test_gemm_sm90a_gpu.py > /tmp/t1.txt 2>&1
echo "sm90a file rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t1.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t1.txt | head -10
timeout -s ABRT 210 $T tests/test_rows_gpu.py > /tmp/t2.txt 2>&1
echo "rows file rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t2.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t2.txt | head -10
for round in 1 2; do
    timeout 50 python3 tools/host_parts.py > /tmp/h.txt 2>&1
    echo "host parts round $round rc=$?"
    grep -E "launch|cuLaunchKernel|ndarray|alloc|gemm 128|empty" /tmp/h.txt
done
echo "done at ${SECONDS}s"
