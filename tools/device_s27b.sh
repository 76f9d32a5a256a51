#!/usr/bin/env bash
# Session 27 run B: the final code of perf-notes d7 (the loader's column groups; whole-stage
# k-groups for either major of a). The GEMM GPU file (the loader is shared), the f64 GPU file
# and f64 intrinsics side by side; compute-sanitizer on the f64 cases (two new: M-major a with
# a K-major b, and with an odd M) and the sm80-class float32 ones; then the f64 bench with a
# transposed a (cr, cc) and b (rc), one layout a process, cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s27b.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300"
pids=""
timeout 400 $PYT -n 8 tests/test_gemm_gpu.py > "$out/t_gemm.txt" 2>&1 & pids="$pids $!"
timeout 400 $PYT tests/test_gemm_f64_gpu.py > "$out/t_f64.txt" 2>&1 & pids="$pids $!"
timeout 400 $PYT tests/test_intrinsics_gpu.py -k f64 > "$out/t_intr.txt" 2>&1 & pids="$pids $!"
ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout cr & pids="$pids $!"
ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout cc & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
CASES="float64 float32"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py $CASES > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 120 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py $CASES \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
grep -E "relerr" "$out/memcheck.txt" | head -12
for lay in cr cc rc; do
    ab_bench "final_$lay" "$PWD" --dtypes f64 --sizes 2048,4096,8192 --layout $lay
done
echo "done at ${SECONDS}s"
