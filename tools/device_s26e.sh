#!/usr/bin/env bash
# Session 26 run E (perf-notes d6), on the H200: the float64 GPU tests, the f64 intrinsics and
# the validate-plans test, memcheck and racecheck on the f64 cases, then the kernel before
# (tree 18d0a3e under _ab/old: 4 stages, the refill first) against this tree (3 stages, the
# refill after the first piece; and 4 stages forced) in two alternating rounds, cuBLAS beside.
# Usage (device tool, carry .whl): bash tools/device_s26e.sh
. tools/device-preamble.sh  # environment, log, GPU
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
pids=""
timeout 300 $PYT tests/test_intrinsics_gpu.py -k "f64" > "$out/t_intr.txt" 2>&1 &
pids="$pids $!"
timeout 300 $PYT tests/test_gemm_f64_gpu.py > "$out/t_f64.txt" 2>&1 &
pids="$pids $!"
timeout 300 $PYT tests/test_aot.py -k "validate_plans" > "$out/t_aot.txt" 2>&1 &
pids="$pids $!"
OLD=$PWD/_ab/old  # python -m puts the working directory first on sys.path: run from there
(cd "$OLD" && PYTHONPATH=/tmp/site:$OLD NBKERNELS_CACHE_DIR=/tmp/nbk-old timeout 200 \
    python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 --prewarm 2 --prewarm-only \
    > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
timeout 200 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048 \
    --tiles "default;128,64,128,2,2,4,8,2" --prewarm 2 --prewarm-only > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py float64 > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases" "$out/memcheck.txt"
timeout 120 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py float64 \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
for round in 1 2; do
    for side in old new; do
        if [ $side = old ]; then P=$OLD; C=/tmp/nbk-old; T=default
        else P=$PWD; C=$NBKERNELS_CACHE_DIR; T="default;128,64,128,2,2,4,8,2"; fi
        (cd "$P" && PYTHONPATH=/tmp/site:$P NBKERNELS_CACHE_DIR=$C timeout 150 \
            python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096,8192 --tiles "$T" \
            --json "$out/${side}_$round.json" > "$out/${side}_$round.txt" 2>&1)
        echo "round $round $side rc=$? at ${SECONDS}s"
        python3 -c "
import json; rows = json.load(open('$out/${side}_$round.json'))
for r in rows: print(f\"    {r['m']:5d} {r['plan_tile']:22s} {r['nbk_tflops']:5.1f} / {r['cublas_tflops']:5.1f} = {r['ratio']:.3f}  err {r['relerr']:.0e}\")"
    done
done
echo "done at ${SECONDS}s"
