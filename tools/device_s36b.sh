#!/usr/bin/env bash
# Session 36, run B (device tool, carry .whl): the array-interface producer-stream tests,
# rewritten after run A (one stream holds back every array of a call; a first call of the same
# shapes before it), with the wait on, then off (the negative control: every test must fail).
. tools/device-preamble.sh
. tools/device-pytest.sh
PYT="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
for round in 1 2; do
    timeout -s ABRT 200 $PYT -n 3 tests/test_array_streams_gpu.py > "$out/t_streams$round.txt" 2>&1
    echo "round $round, wait on: $(grep -E '[0-9]+ (passed|failed)' "$out/t_streams$round.txt" | tail -n 1)"
    grep -E "^(FAILED|ERROR)" "$out/t_streams$round.txt" | cut -c1-160
    NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0 timeout -s ABRT 200 $PYT -n 3 \
        tests/test_array_streams_gpu.py > "$out/n_streams$round.txt" 2>&1
    echo "round $round, wait off (each must fail): $(grep -E '[0-9]+ (passed|failed)' "$out/n_streams$round.txt" | tail -n 1)"
done
echo "done at ${SECONDS}s"
