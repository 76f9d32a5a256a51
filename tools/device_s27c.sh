#!/usr/bin/env bash
# Session 27 run C (H200): perf-notes d7's final code. The f64 GPU file, then the f64 bench in
# each operand layout (rr, rc, cr, cc), one layout a process, cuBLAS beside, at 2048^3, 4096^3
# and 8192^3.
# Usage (device tool, carry .whl): bash tools/device_s27c.sh
. tools/device-preamble.sh  # environment, log, GPU
. tools/ab-lib.sh
pids=""
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_f64_gpu.py \
    > "$out/t_f64.txt" 2>&1 & pids="$pids $!"
for lay in rr rc cr cc; do
    ab_warm "$PWD" --dtypes f64 --sizes 2048 --layout $lay & pids="$pids $!"
done
wait $pids  # not a bare wait: it would wait for the log tee too
echo "t_f64: $(tail -n 1 $out/t_f64.txt)"; grep -h -E "^(FAILED|ERROR)" "$out/t_f64.txt" | head
for lay in rr rc cr cc; do
    ab_bench "h200_$lay" "$PWD" --dtypes f64 --sizes 2048,4096,8192 --layout $lay
done
echo "done at ${SECONDS}s"
