#!/usr/bin/env bash
# Session 8, run 7: the row layouts chosen per block size (perf-notes r11): the GPU tests of
# softmax (every dtype) and float32 rms_norm, in parallel processes, then the benchmark of
# the changed defaults against the layouts they replace.
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
pids=""
for k in "softmax and float32" "softmax and bfloat16" "softmax and float16" \
         "rms_norm and float32 and not residual"; do
    timeout 330 $PYT tests/test_rows_gpu.py -k "$k" > "$out/t_${k// /_}.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 250 python3 -m nbkernels.rows.bench --ops rms_norm,softmax,layer_norm --dtypes bf16,f32 \
    --modes auto,0,1,2 --json "$out/rows_r11.json" 2>&1 | grep -v Warning
echo "done at ${SECONDS}s"
