#!/usr/bin/env bash
# Session 11, runs 4 and 5 (device tool, carry .whl; ab_old/ = f8a9d78, untracked): (1) the
# repeat path's GPU tests (GEMM, f64, sm90a, rows; threads) on this tree; (2) small-call host
# time, ab_old/ against this tree, three rounds alternated; (3) unless NO_BENCH is set, bf16 /
# f16 at 6144^3 and 8192^3, config.WIDE_K against 128x256x128B with 2 stages, twice.
. tools/device-preamble.sh  # environment, log, GPU
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 6144,8192 --variant sm80 --tiles default;128,256,128,2,4,2"
WARM="
import cupy, numpy as np, nbkernels
from nbkernels.arrays import BF16
x = cupy.asarray(np.random.default_rng().standard_normal((1, 4096)).astype(BF16))
nbkernels.rms_norm(x, x[0]); a = cupy.asarray(np.ones((128, 128), BF16)); nbkernels.gemm(a, a)
cupy.cuda.get_current_stream().synchronize(); print('warm', nbkernels.__file__)"
T="timeout 300 python3 -m pytest -q -p no:cacheprovider"
pids=""
if [ -z "$NO_BENCH" ]; then
    timeout 240 $B $P --prewarm 3 --prewarm-only > "$out/prewarm.txt" 2>&1 &
    pids="$pids $!"
fi
$T tests/test_gemm_gpu.py -k "repeat or torch or split_k or fused" > "$out/t_gemm.txt" 2>&1 &
pids="$pids $!"
$T tests/test_gemm_sm90a_gpu.py -k "repeat or cluster_grid or torch" > "$out/t_sm90a.txt" 2>&1 &
pids="$pids $!"
$T tests/test_gemm_f64_gpu.py -k repeat > "$out/t_f64.txt" 2>&1 &
pids="$pids $!"
$T tests/test_rows_gpu.py -k "repeat or replay or stream or place" > "$out/t_rows.txt" 2>&1 &
pids="$pids $!"
timeout 300 python3 -c "$WARM" > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 300 python3 -c "$WARM" > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for f in "$out"/t_*.txt; do echo "$(basename $f): $(grep -E '[0-9]+ (passed|failed)' $f | tail -n 1)"; done
grep -h -E "^(FAILED|ERROR)" "$out"/t_*.txt | head -20
tail -qn 1 "$out"/warm_*.txt
echo "phase 1 done at ${SECONDS}s"
for round in 1 2 3; do
    echo "--- host round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 60 python3 ../tools/host_parts.py --calls)
    echo "--- host round $round: this tree"
    timeout 60 python3 tools/host_parts.py --calls
done
echo "host done at ${SECONDS}s"
[ -n "$NO_BENCH" ] && { echo "done at ${SECONDS}s"; exit 0; }
for round in 1 2; do
    timeout 150 $B $P --json "$out/bench_$round.json" > "$out/bench_$round.txt" 2>&1
    echo "bench round $round rc=$? at ${SECONDS}s"
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_1.json "$out"/bench_2.json
echo "done at ${SECONDS}s"
