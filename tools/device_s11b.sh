#!/usr/bin/env bash
# Session 11, run 2 (device tool, carry .whl and ab_old): config.WIDE_K as the sm80-class
# default on Hopper, and the leaner repeat path.
#   1. compile the benchmark configurations while the GEMM GPU file runs (its new WIDE_K sweep
#      included) and both trees warm their small kernels;
#   2. memcheck and racecheck on the forced WIDE_K edge cases;
#   3. host cost of small calls, ab_old/ (the previous commit) against this tree, alternated;
#   4. bf16 / f16 at 4096^3 and 8192^3 (sm80 forced: WIDE_K against the 64-byte tile), f64
#      stage counts; then the sm80-class size sweep for docs/.
. tools/device-preamble.sh  # environment, log, GPU
[ -d ab_old/nbkernels ] || { echo "ab_old/nbkernels missing"; exit 1; }
B="python3 -m nbkernels.matmul.bench"
BF="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80 --tiles default;128,128,64,2,2,4"
F64="--dtypes f64 --sizes 2048,4096,8192
     --tiles default;128,64,128,2,2,3,min_blocks=2;128,64,128,2,2,3,min_blocks=3"
SWEEP="--dtypes bf16,f16 --sizes sweep --variant sm80"
WARM="
import cupy, numpy as np, nbkernels
from nbkernels.arrays import BF16
x = cupy.asarray(np.random.default_rng().standard_normal((1, 4096)).astype(BF16))
nbkernels.rms_norm(x, x[0]); a = cupy.asarray(np.ones((128, 128), BF16)); nbkernels.gemm(a, a)
cupy.cuda.get_current_stream().synchronize(); print('warm', nbkernels.__file__)"
pids=""
for g in BF F64 SWEEP; do
    timeout 300 $B ${!g} --prewarm 3 --prewarm-only > "$out/prewarm_$g.txt" 2>&1 &
    pids="$pids $!"
done
timeout 300 python3 -m pytest -q -p no:cacheprovider -n 5 tests/test_gemm_gpu.py \
    > "$out/t_gemm.txt" 2>&1 &
pids="$pids $!"
timeout 300 python3 -c "$WARM" > "$out/warm_new.txt" 2>&1 &
pids="$pids $!"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 300 python3 -c "$WARM" > "$out/warm_old.txt" 2>&1) &
pids="$pids $!"
wait $pids  # not a bare wait: it would wait for the log tee too
for g in BF F64 SWEEP; do echo "prewarm $g: $(tail -n 1 $out/prewarm_$g.txt)"; done
echo "t_gemm: $(tail -n 1 $out/t_gemm.txt)"
grep -h -E "^(FAILED|ERROR)" "$out"/t_gemm.txt | head -20
tail -n 1 "$out"/warm_*.txt
echo "phase 1 done at ${SECONDS}s"
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no \
    python3 tools/sanitize_gemm.py sm80/wide > "$out/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|sanitize cases|relerr" "$out/memcheck.txt"
timeout 120 compute-sanitizer --tool racecheck python3 tools/sanitize_gemm.py sm80/wide \
    > "$out/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "HAZARD|RACECHECK SUMMARY|sanitize cases" "$out/racecheck.txt" | head
for round in 1 2; do
    echo "--- host round $round: ab_old"
    (cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 60 python3 ../tools/host_parts.py --calls)
    echo "--- host round $round: this tree"
    timeout 60 python3 tools/host_parts.py --calls
done
for g in BF F64 SWEEP; do
    timeout 200 $B ${!g} --json "$out/bench_$g.json" > "$out/bench_$g.txt" 2>&1
    echo "bench $g rc=$? at ${SECONDS}s"
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_BF.json "$out"/bench_F64.json
tail -n 16 "$out/bench_SWEEP.txt"
echo "done at ${SECONDS}s"
