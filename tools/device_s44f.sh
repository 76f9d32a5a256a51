#!/usr/bin/env bash
# Session 44, run F (device tool, carry .whl and _ab; _ab/base = `git archive c5688d1`, the
# session's start): the session's final row code.
# 1. The whole row GPU file (every op, layout and framework; the new layer_norm cases among
#    them), beside a warm-up of both trees' float32 layer_norm (its build's PTX moved a little
#    with the shared-vector code though it shares none: the same 465 instructions a row).
# 2. `python -m nbkernels demo --probes`: every intrinsic probe, bar_sync's among them.
# 3. tools/rows_ab_quick.py --ops layer_norm --dtypes f32, the session's start and this tree
#    alternated twice.
. tools/device-preamble.sh
. tools/device-pytest.sh
base=$(cd _ab/base && pwd)
W="tools/rows_ab_quick.py --ops layer_norm --dtypes f32"
timeout 300 python3 $W --reps 1 > "$out/warm_new.txt" 2>&1 &
p1=$!
(cd "$base" && PYTHONPATH=/tmp/site:$base NBKERNELS_CACHE_DIR=$base/.nbk_cache timeout 300 \
    python3 $W --reps 1 > "$out/warm_base.txt" 2>&1) &
p2=$!
gpu_tests 400 300 t_rows.txt -n 12 tests/test_rows_gpu.py
wait $p1 $p2
echo "warm-up done at ${SECONDS}s"
timeout 120 python3 -m nbkernels demo --probes 2>&1 | tail -4
for r in 1 2; do
    echo "--- round $r: base"
    (cd "$base" && PYTHONPATH=/tmp/site:$base NBKERNELS_CACHE_DIR=$base/.nbk_cache timeout 120 \
        python3 $W 2>&1 | grep "of copy")
    echo "--- round $r: new"
    timeout 120 python3 $W 2>&1 | grep "of copy"
done
echo "done at ${SECONDS}s"
