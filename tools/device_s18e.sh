#!/usr/bin/env bash
# Session 18, run E (device tool, carry .whl and ab_old): stream= and the call's temporaries.
# The new tests (a stream held back ~20 ms, the current stream's pool clobbered right after the
# call) on this tree, where the call runs with that stream current (repeat.stream_ordered),
# then on ab_old (the tree before that change, with the same tests): there they should fail.
. tools/device-preamble.sh
T="python3 -m pytest -q -p no:cacheprovider -n 4"
sel="stream_argument_orders or side_stream or in_place_and_stream or torch_repeat_calls_run"
timeout 230 $T tests/test_gemm_gpu.py tests/test_rows_gpu.py -k "$sel" > /tmp/new.txt 2>&1
echo "this tree rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/new.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/new.txt | head -8
old=$PWD/ab_old; cd "$old" && PYTHONPATH=/tmp/site:$old NBKERNELS_CACHE_DIR=$old/.nbk_cache timeout 230 $T tests/test_gemm_gpu.py tests/test_rows_gpu.py -k "stream_argument_orders" > /tmp/old.txt 2>&1
echo "before the change rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/old.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" /tmp/old.txt | head -8
cp /tmp/new.txt /tmp/old.txt "${OUT:-/tmp}/"
