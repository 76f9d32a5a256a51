#!/usr/bin/env bash
# Session 26 run L: the GEMM GPU file on the sm80-class refill move (perf-notes v9), then
# compute-sanitizer on the sm80-class cases (WIDE_K forced, int8, tf32 split, fp32 SIMT).
# Usage (device tool, carry .whl): bash tools/device_s26l.sh
. tools/device-preamble.sh  # environment, log, GPU
timeout 420 python3 -m pytest -q -p no:cacheprovider -n 12 tests/test_gemm_gpu.py \
    > "$out/t_gemm.txt" 2>&1
echo "gemm GPU file rc=$? at ${SECONDS}s: $(tail -n 1 $out/t_gemm.txt)"
grep -h -E "^(FAILED|ERROR)" "$out/t_gemm.txt" | head -20
CASES="sm80/wide int8 float32"
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py $CASES > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 90 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py $CASES \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
grep -E "relerr" "$out/memcheck.txt" | head -12
echo "done at ${SECONDS}s"
