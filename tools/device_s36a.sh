#!/usr/bin/env bash
# Session 36, run A (device tool, carry .whl): the array-interface producer streams on a GPU
# (tests/test_array_streams_gpu.py, then the same with the wait switched off, which must fail:
# the tests' negative control), and the whole GEMM GPU file (not run in session 35).
. tools/device-preamble.sh
. tools/device-pytest.sh
PYT="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300"
timeout -s ABRT 520 $PYT -n 10 tests/test_gemm_gpu.py > "$out/t_gemm.txt" 2>&1 & gemm=$!
timeout -s ABRT 300 $PYT -n 3 tests/test_array_streams_gpu.py > "$out/t_streams.txt" 2>&1
echo "streams (wait on): $(grep -E '[0-9]+ (passed|failed)' "$out/t_streams.txt" | tail -n 1)"
NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0 timeout -s ABRT 200 $PYT -n 3 tests/test_array_streams_gpu.py \
    > "$out/n_streams.txt" 2>&1
echo "streams (wait off, expected to fail): $(grep -E '[0-9]+ (passed|failed)' "$out/n_streams.txt" | tail -n 1)"
grep -E "^FAILED" "$out/n_streams.txt" | cut -c1-160
wait $gemm
echo "gemm file: $(grep -E '[0-9]+ (passed|failed)' "$out/t_gemm.txt" | tail -n 1)"
grep -h -E "^(FAILED|ERROR)|Timeout" "$out"/t_*.txt | head -20
echo "done at ${SECONDS}s"
