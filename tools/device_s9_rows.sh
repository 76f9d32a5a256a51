#!/usr/bin/env bash
# Session 9, run 1: the row kernels with fewer instructions a row (branch rows-icut: a thread
# whose elements all lie inside the row copies and stores 16 bytes at a time without byte
# counts or masks; 1/sqrt as rsqrt.approx; partial accesses with one address and a 32-bit
# count). (1) the whole row GPU test file, split by op over parallel pytest processes so the
# kernels compile in parallel, beside a warm-up that compiles the benchmarked kernels of this
# tree and of the tree before (ab_old/: `git archive 4f6dba7 nbkernels`, untracked, carried
# with the tree); (2) `rows.bench --ops rms_norm,layer_norm,softmax --dtypes bf16,f32` on the
# old tree and on this one, alternated twice (each run measures its own copy bandwidth);
# (3) % of copy per op, dtype and shape, old against new. About 9 minutes in all; `tests` or
# `bench` as the argument runs (1) or (2)-(3) alone (a warm machine keeps .nbk_cache).
. tools/device-preamble.sh  # environment, log, GPU
what=${1:-all}
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing: git archive 4f6dba7 nbkernels | tar -x -C ab_old"; exit 1; }
PYT="python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
WARM='
import cupy, ml_dtypes, numpy as np, nbkernels
for dt in (ml_dtypes.bfloat16, np.float32):
    x = cupy.asarray(np.random.default_rng(0).standard_normal((64, 4096)).astype(dt))
    w = x[0].copy()
    nbkernels.rms_norm(x, w, 1e-6); nbkernels.layer_norm(x, w, w, 1e-6); nbkernels.softmax(x)
cupy.cuda.get_current_stream().synchronize()
print("warm", nbkernels.__file__)
'
if [ "$what" != bench ]; then
pids=""
for sel in "rms_norm and not residual" "rms_norm_residual" "layer_norm and float32" \
           "layer_norm and not float32" "softmax and float32" "softmax and not float32" \
           "swiglu and not packed" "swiglu_packed" \
           "not (rms_norm or layer_norm or softmax or swiglu)"; do
    name=$(echo "$sel" | tr -c 'a-z0-9\n' '_')
    timeout 220 $PYT tests/test_rows_gpu.py -k "$sel" > "$out/t_$name.txt" 2>&1 &
    pids="$pids $!"
done
timeout 220 python3 -c "$WARM" > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 220 python3 -c "$WARM" > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
tail -n 1 "$out"/warm_*.txt
echo "tests done at ${SECONDS}s"
fi
[ "$what" = tests ] && exit 0
BENCH="python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm,softmax --dtypes bf16,f32"
for round in 1 2; do
    echo "--- round $round: before (4f6dba7)"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 85 $BENCH --json "$out/bench_old$round.json" \
        2>&1 | grep -v Warning)
    echo "--- round $round: this tree"
    timeout 85 $BENCH --json "$out/bench_new$round.json" 2>&1 | grep -v Warning
done
echo "benchmarks done at ${SECONDS}s"
python3 tools/rows_ab_table.py "$out"  # (the table was inline here when run 6 ran)
echo "done at ${SECONDS}s"
