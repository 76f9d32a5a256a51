#!/usr/bin/env bash
# Session 14, run A (device tool, carry .whl): (1) the out-aliasing tests never run on a GPU:
# the GEMM's out sharing memory with a or b (a8d23f1) and the rows' out = x shifted by a row
# (this session), with the in-place / repeat / replay tests next to them; (2) the small row
# call's wall time with the replay's new overlap guard; (3) as much of the GEMM and row GPU
# files as the call has left (the kernel cache stays for the next call while the machine is
# warm).
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=250"
timeout -s ABRT 330 $T -n 16 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    -k "sharing or shifted or place or repeat or replay" > /tmp/t1.txt 2>&1
echo "aliasing tests rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t1.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t1.txt | head -12
timeout 60 python3 tools/host_rows.py 2>&1 | head -n 8
left=$((560 - SECONDS))
if [ $left -gt 60 ]; then
    timeout -s ABRT $left $T -n 16 tests/test_gemm_gpu.py tests/test_rows_gpu.py \
        -k "not (sharing or shifted or place or repeat or replay)" > /tmp/t2.txt 2>&1
    echo "rest of the two files rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t2.txt | tail -n 1)"
    grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t2.txt | head -12
fi
cp /tmp/t1.txt /tmp/t2.txt "${OUT:-/tmp}/" 2>/dev/null
echo "done at ${SECONDS}s"
