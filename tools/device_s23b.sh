#!/usr/bin/env bash
# Session 23, run B (device tool, carry .whl): layer_norm's one-barrier statistics as
# committed (perf-notes r16): the row GPU tests of layer_norm, one process per dtype, then
# tools/sanitize_rows.py's layer_norm cases under compute-sanitizer memcheck and racecheck
# (the kernels come from the cache the tests filled).
. tools/device-preamble.sh
pids=""
for dt in float32 bfloat16 float16; do
    timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_rows_gpu.py \
        -k "layer_norm and $dt" > "$out/t_$dt.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no python3 tools/sanitize_rows.py layer_norm 2>&1 | tail -4
echo "memcheck done at ${SECONDS}s"
timeout 150 compute-sanitizer --tool racecheck --report-api-errors no python3 tools/sanitize_rows.py layer_norm 2>&1 | tail -4
echo "racecheck done at ${SECONDS}s"
