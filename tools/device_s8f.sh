#!/usr/bin/env bash
# Session 8, run 5: after the torch dtype table moved into arrays (torch_dtype_of, used by
# runner.empty and repeat.alloc): every torch test of the row and GEMM GPU files, and the
# repeat / stream tests again, in parallel processes.
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
pids=""
for op in "rms_norm" "layer_norm" "softmax" "swiglu"; do
    timeout 450 $PYT tests/test_rows_gpu.py -k "(torch or repeat or replays) and $op" \
        > "$out/t_rows_$op.txt" 2>&1 &
    pids="$pids $!"
done
timeout 450 $PYT tests/test_gemm_gpu.py tests/test_gemm_f64_gpu.py -k "torch or repeat" \
    > "$out/t_gemm.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "done at ${SECONDS}s"
