#!/usr/bin/env bash
# Session 30, run D (device tool, carry .whl): the GEMM GPU file on this session's code (the
# GEMM replay now orders only its allocations on a given stream, repeat.alloc_source), the
# sm90a GPU file's replay, stream and map-store tests, and the row layout test rewritten for
# rms_norm's 64-element build (perf-notes r27).
. tools/device-preamble.sh
. tools/device-pytest.sh
PYT="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300"
pids=""
timeout -s ABRT 500 $PYT -n 10 tests/test_gemm_gpu.py > "$out/t_gemm.txt" 2>&1 & pids="$pids $!"
timeout -s ABRT 500 $PYT -n 4 tests/test_gemm_sm90a_gpu.py tests/test_hopper_gpu.py \
    -k "repeat or stream or map_store or torch or thread" > "$out/t_sm90a.txt" 2>&1 &
pids="$pids $!"
timeout -s ABRT 300 $PYT tests/test_rows_gpu.py -k "bandwidth_per_sm or resident_estimate" \
    > "$out/t_rows.txt" 2>&1 & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(grep -E '[0-9]+ (passed|failed)' $f | tail -n 1)"; done
grep -h -E "^(FAILED|ERROR)|Timeout" "$out"/t_*.txt | head -20
echo "done at ${SECONDS}s"
