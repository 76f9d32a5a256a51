#!/usr/bin/env bash
# Session 24, run A (device tool, carry .whl and ab_old = the nbkernels of 7448b0f, the
# session's start, with 9d27aff's disk-cache fix for row kernels): the rows staged with
# cp.async's L2::256B prefetch hint (perf-notes r17).
# 1. Warms both trees on the timed shapes (tools/rows_ab_quick.py with one rep, one process
#    per tree, dtype and op, compiling in parallel into the disk cache; before 9d27aff no row
#    kernel reached it, so every measuring process compiled its own, which is what made session
#    23's measurements take ~20 s each), and the sanitizer cases of this tree beside them.
# 2. tools/rows_ab_quick.py on the old and this tree alternated (ROUNDS, default 3).
# 3. compute-sanitizer memcheck and racecheck on tools/sanitize_rows.py (this tree; every op
#    or SANOP), unless SAN=0.
# 4. With TESTK, the row GPU tests it selects (pytest -k).
. tools/device-preamble.sh
ops=${OPS:-rms_norm,layer_norm,softmax,swiglu} dtypes=${DTYPES:-bf16,f32}
QUICK="$PWD/tools/rows_ab_quick.py --ops $ops"
pids=""
W="$PWD/tools/rows_ab_quick.py --reps 1"
for d in ${dtypes//,/ }; do
    for op in ${ops//,/ }; do  # one process per tree, dtype and op: 16 compiling at once
        timeout 400 python3 $W --ops $op --dtypes $d > "$out/warm_new_${op}_$d.txt" 2>&1 &
        pids="$pids $!"
        (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 400 python3 $W --ops $op --dtypes $d \
            > "$out/warm_old_${op}_$d.txt" 2>&1) &
        pids="$pids $!"
    done
done
if [ "${SAN:-1}" != 0 ]; then
    timeout 400 python3 tools/sanitize_rows.py $SANOP > "$out/san_warm.txt" 2>&1 &
    pids="$pids $!"
fi
wait $pids
for f in "$out"/warm_*.txt "$out"/san_warm.txt; do
    [ -f "$f" ] && echo "$(basename $f): $(grep -c '% of copy' $f) timed; $(tail -n 1 $f)"
done
echo "warm-up done at ${SECONDS}s"
for round in $(seq 1 ${ROUNDS:-3}); do
    echo "--- round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 120 python3 $QUICK --dtypes $dtypes \
        --json "$out/quick_old$round.json" 2>&1 | grep -v Warning)
    echo "--- round $round: this tree"
    timeout 120 python3 $QUICK --dtypes $dtypes --json "$out/quick_new$round.json" 2>&1 \
        | grep -v Warning
done
echo "benchmarks done at ${SECONDS}s"
python3 tools/rows_ab_summary.py "$out"
if [ "${SAN:-1}" != 0 ]; then
    for tool in memcheck racecheck; do
        timeout ${SAN_S:-200} compute-sanitizer --tool $tool --report-api-errors no \
            python3 tools/sanitize_rows.py $SANOP 2>&1 | tail -4
        echo "$tool done at ${SECONDS}s"
    done
fi
if [ -n "${TESTK:-}" ]; then
    timeout ${TEST_S:-200} python3 -m pytest -q -p no:cacheprovider tests/test_rows_gpu.py -k "$TESTK" 2>&1 | tail -n 3
    echo "tests done at ${SECONDS}s"
fi
