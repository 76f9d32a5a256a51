#!/usr/bin/env bash
# Session 27 run D (perf-notes d7): float64 with a and b both transposed run as D^T = b^T a^T
# (api.plan's swap). The f64 GPU file (the repeat-call path with the operands exchanged
# included), compute-sanitizer on the f64 cases, then the f64 bench with --layout cc (two
# processes) and rr, cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s27d.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
pids=""
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_f64_gpu.py \
    > "$out/t_f64.txt" 2>&1 & pids="$pids $!"
ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout cc & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
echo "t_f64: $(tail -n 1 $out/t_f64.txt)"; grep -h -E "^(FAILED|ERROR)" "$out/t_f64.txt" | head
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py float64 > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 120 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py float64 \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
grep -E "relerr" "$out/memcheck.txt"
for run in cc_1 rr_1 cc_2; do
    ab_bench "swap_$run" "$PWD" --dtypes f64 --sizes 2048,4096,8192 --layout ${run%_*}
done
echo "done at ${SECONDS}s"
