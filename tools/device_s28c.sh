#!/usr/bin/env bash
# Session 28, run C (device tool, carry .whl): the whole GEMM GPU file and the f64 GPU file on
# the generated repeat-call replays (perf-notes h4): most of their tests call gemm more than
# once with one geometry, so their later calls replay.
. tools/device-preamble.sh
PYT="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300"
pids=""
timeout -s ABRT 520 $PYT -n 10 tests/test_gemm_gpu.py > "$out/t_gemm.txt" 2>&1 & pids="$pids $!"
timeout -s ABRT 520 $PYT -n 2 tests/test_gemm_f64_gpu.py > "$out/t_f64.txt" 2>&1 & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(grep -E '[0-9]+ (passed|failed)' $f | tail -n 1)"; done
grep -h -E "^(FAILED|ERROR)|Timeout" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
