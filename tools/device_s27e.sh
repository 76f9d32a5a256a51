#!/usr/bin/env bash
# Session 27 run E (H200): the final code. The GEMM GPU file and the f64 GPU file, then the f64
# bench with a and b transposed (cc, run as b^T a^T) and an M-major a (cr), one layout a
# process, cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s27e.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300"
pids=""
timeout 420 $PYT -n 8 tests/test_gemm_gpu.py > "$out/t_gemm.txt" 2>&1 & pids="$pids $!"
timeout 420 $PYT tests/test_gemm_f64_gpu.py > "$out/t_f64.txt" 2>&1 & pids="$pids $!"
ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout cc & pids="$pids $!"
ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout cr & pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
for lay in cc cr; do
    ab_bench "h200_$lay" "$PWD" --dtypes f64 --sizes 2048,4096,8192 --layout $lay
done
echo "done at ${SECONDS}s"
