#!/usr/bin/env bash
# Session 8, run 2: the leaner repeat path (nbkernels/repeat.py, perf-notes r9). (1) the GPU
# tests that take it: row replays (every op, CuPy, in place, streams, loop modes) and the
# GEMM repeat calls (sm80-class, f64, sm90a tensor maps), in parallel processes so the cold
# kernel cache builds in parallel; (2) tools/host_parts.py again; (3) the bf16 row benchmark
# (large sizes against the copy, small sizes' wall time per call).
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
pids=""
for op in rms_norm layer_norm softmax swiglu; do
    timeout 330 $PYT tests/test_rows_gpu.py -k "repeat and $op" > "$out/t_rep_$op.txt" 2>&1 &
    pids="$pids $!"
done
timeout 330 $PYT tests/test_rows_gpu.py -k "in_place_and_stream or (loop_modes and rms_norm)" \
    > "$out/t_rows_misc.txt" 2>&1 &
pids="$pids $!"
timeout 330 $PYT tests/test_gemm_gpu.py -k "repeat" > "$out/t_gemm_rep.txt" 2>&1 &
pids="$pids $!"
timeout 330 $PYT tests/test_gemm_f64_gpu.py -k "repeat" > "$out/t_f64_rep.txt" 2>&1 &
pids="$pids $!"
timeout 330 $PYT tests/test_gemm_sm90a_gpu.py -k "repeat" > "$out/t_sm90a_rep.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 150 python3 tools/host_parts.py
echo "host parts done at ${SECONDS}s"
timeout 200 python3 -m nbkernels.rows.bench --dtypes bf16 --json "$out/rows_bf16.json"
echo "done at ${SECONDS}s"
