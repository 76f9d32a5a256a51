#!/usr/bin/env bash
# Session 24, run B (device tool, carry .whl): the row kernels as committed after perf-notes
# r17 (the prefetch hint reverted; 9d27aff's disk cache): the whole row GPU file under
# pytest-xdist (TEST_S seconds, default 400; the kernels compile once into the shared disk
# cache), beside the sanitizer cases compiling per op; then tools/sanitize_rows.py under
# compute-sanitizer memcheck and racecheck.
. tools/device-preamble.sh
. tools/device-warm-rows.sh
python3 -c "import xdist" 2>/dev/null && par="-n ${WORKERS:-10}" || par=""
echo "pytest-xdist: ${par:-absent}"
timeout ${TEST_S:-400} python3 -m pytest -q -p no:cacheprovider $par tests/test_rows_gpu.py \
    > "$out/tests.txt" 2>&1 &
tp=$!
pids=""
for op in rms_norm_residual layer_norm softmax swiglu_packed rms_norm; do
    timeout 300 python3 tools/sanitize_rows.py $op > "$out/san_$op.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids
tail -q -n 1 "$out"/san_*.txt
echo "sanitizer cases warm at ${SECONDS}s"
sanitize_rows
wait $tp; echo "tests rc=$?"
tail -n 3 "$out/tests.txt"; grep -E "^(FAILED|ERROR)" "$out/tests.txt" | head -20
echo "passed dots: $(grep -o '\.' <(grep -E '^[.sFE]+' "$out/tests.txt") | wc -l)"
