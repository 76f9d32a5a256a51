#!/usr/bin/env bash
# A/B of the row kernels on one machine: this tree against the one in ab_old/ (untracked:
# `mkdir ab_old && git archive REV nbkernels | tar -x -C ab_old`, carried with the tree).
# Usage: tools/device_rows_ab.sh OPS DTYPES [TEST_K]: (1) the row GPU tests selected by
# pytest -k TEST_K (none if empty), split over parallel processes by dtype, beside a warm-up
# of both trees' kernels; (2) `rows.bench --ops OPS --dtypes DTYPES` on the old tree and this
# one, alternated twice; (3) % of copy per op, dtype and shape, old against new.
. tools/device-preamble.sh  # environment, log, GPU
ops=$1 dtypes=$2 testk=${3:-}
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
WARM="
import cupy, ml_dtypes, numpy as np, nbkernels
from nbkernels.rows.bench import OPS
dts = {'bf16': ml_dtypes.bfloat16, 'f16': np.float16, 'f32': np.float32}
for d in '$dtypes'.split(','):
    x = cupy.asarray(np.random.default_rng(0).standard_normal((64, 4096)).astype(dts[d]))
    w = x[0].copy()
    for op in '$ops'.split(','):
        {'rms_norm': lambda: nbkernels.rms_norm(x, w), 'layer_norm': lambda: nbkernels.layer_norm(x, w, w),
         'softmax': lambda: nbkernels.softmax(x), 'swiglu': lambda: nbkernels.swiglu(x, x),
         'rms_norm_residual': lambda: nbkernels.rms_norm(x, w, residual=x)}[op]()
cupy.cuda.get_current_stream().synchronize()
print('warm', nbkernels.__file__)
"
pids=""
if [ -n "$testk" ]; then
    for dt in float32 bfloat16 float16; do
        timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_rows_gpu.py \
            -k "($testk) and $dt" > "$out/t_$dt.txt" 2>&1 &
        pids="$pids $!"
    done
fi
timeout 280 python3 -c "$WARM" > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 280 python3 -c "$WARM" > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do [ -f "$f" ] && echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt 2>/dev/null | head -20
tail -n 1 "$out"/warm_*.txt
echo "tests and warm-up done at ${SECONDS}s"
BENCH="python3 -m nbkernels.rows.bench --ops $ops --dtypes $dtypes"
for round in 1 2; do
    echo "--- round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 100 $BENCH --json "$out/bench_old$round.json" \
        2>&1 | grep -v Warning)
    echo "--- round $round: this tree"
    timeout 100 $BENCH --json "$out/bench_new$round.json" 2>&1 | grep -v Warning
done
echo "benchmarks done at ${SECONDS}s"
python3 tools/rows_ab_table.py "$out"
echo "done at ${SECONDS}s"
