#!/usr/bin/env bash
# Session 23, run A (device tool, carry .whl and ab_old = the session's starting tree's
# nbkernels): one barrier a row for layer_norm and softmax (perf-notes r16). Warms both
# trees' kernels in parallel processes (one per tree and dtype), then tools/rows_ab_quick.py on the old
# and the new tree alternated (ROUNDS, default 3), rms_norm as the unchanged control.
. tools/device-preamble.sh
ops=${OPS:-layer_norm,softmax,rms_norm} dtypes=${DTYPES:-bf16,f32}
pids=""
for d in ${dtypes//,/ }; do
    W="
import cupy, ml_dtypes, numpy as np, nbkernels
x = cupy.asarray(np.random.default_rng(0).standard_normal((64, 4096)).astype({'bf16': ml_dtypes.bfloat16, 'f16': np.float16, 'f32': np.float32}['$d']))
w = x[0].copy()
for op in '$ops'.split(','):
    {'rms_norm': lambda: nbkernels.rms_norm(x, w), 'layer_norm': lambda: nbkernels.layer_norm(x, w, w), 'softmax': lambda: nbkernels.softmax(x)}[op]()
cupy.cuda.get_current_stream().synchronize()
print('warm $d', nbkernels.__file__)
"
    timeout 300 python3 -c "$W" > "$out/warm_new_$d.txt" 2>&1 &
    pids="$pids $!"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 300 python3 -c "$W" > "$out/warm_old_$d.txt" 2>&1) &
    pids="$pids $!"
done
if [ -n "${TESTK:-}" ]; then  # row GPU tests beside the warm-up
    timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_rows_gpu.py -k "$TESTK" \
        > "$out/tests.txt" 2>&1 &
    pids="$pids $!"
fi
wait $pids
[ -f "$out/tests.txt" ] && tail -n 1 "$out/tests.txt" && grep -E "^(FAILED|ERROR)" "$out/tests.txt" | head
tail -q -n 1 "$out"/warm_*.txt
echo "warm-up done at ${SECONDS}s"
BENCH="python3 $PWD/tools/rows_ab_quick.py --ops $ops --dtypes $dtypes"
for round in $(seq 1 ${ROUNDS:-3}); do
    echo "--- round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 150 $BENCH --json "$out/quick_old$round.json" \
        2>&1 | grep -v Warning)
    echo "--- round $round: this tree"
    timeout 150 $BENCH --json "$out/quick_new$round.json" 2>&1 | grep -v Warning
done
echo "benchmarks done at ${SECONDS}s"
python3 tools/rows_ab_summary.py "$out"
