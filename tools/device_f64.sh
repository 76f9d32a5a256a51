#!/usr/bin/env bash
# The float64 GEMM on a lent GPU (session 9): the f64 intrinsic probes, the f64 GPU tests,
# memcheck and racecheck on the f64 edge cases (tools/sanitize_gemm.py float64), then the
# f64 bench at 2048^3, 4096^3 and 8192^3 of the tiles named in $1 (bench --tiles syntax, e.g.
# "default;128,64,128,2,2,4,min_blocks=2,mma_k=8") beside cuBLAS DGEMM in one process.
# Usage (device tool, carry .whl): bash tools/device_f64.sh [TILES]
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
TILES=${1:-default}
pids=""
timeout 300 $PYT tests/test_intrinsics_gpu.py -k "f64" > "$out/t_intr.txt" 2>&1 &
pids="$pids $!"
timeout 300 $PYT tests/test_gemm_f64_gpu.py -k sweep > "$out/t_sweep.txt" 2>&1 &
pids="$pids $!"
timeout 300 $PYT tests/test_gemm_f64_gpu.py -k "not sweep" > "$out/t_f64.txt" 2>&1 &
pids="$pids $!"
timeout 300 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --tiles "$TILES" \
    --prewarm 3 --prewarm-only > "$out/prewarm.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 90 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py float64 > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 90 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py float64 \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 \
    --tiles "$TILES" --json "$out/bench_f64.json" > "$out/bench.txt" 2>&1
echo "bench rc=$?"; tail -n 12 "$out/bench.txt"
echo "done at ${SECONDS}s"
