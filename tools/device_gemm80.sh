#!/usr/bin/env bash
# Issue #3 on the H200 (device tool, carry .whl): float64 on tensor cores (dmma) and the two
# mma.sync candidates (double-buffered fragments; the 256x128 tf32 tile).
#   1. compile every benchmark configuration in parallel processes, in the background;
#   2. meanwhile, in three processes, the GPU tests of those kernels (f64 sweep, tiles,
#      epilogue, fast path; the double-buffered and 256x128 tiles at sizes with edges);
#   3. f64 1024..8192 against cupy.matmul/torch (cuBLAS DGEMM); bf16/f16 4096^3 and 8192^3 with
#      frag_db off/on; tf32 with the default tile and 256x128; cuBLAS measured in the same run;
#   4. one summary table. JSON and the full log go to $OUT/.
# Usage: bash tools/device_gemm80.sh   (about 5 minutes on a fresh machine, 8 at most)
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
log=$out/log.txt
exec 3>&1 > "$log" 2>&1  # everything to the log; only the summary lines to the console
say() { echo "$@"; echo "$@" >&3; }  # to the log and the console
t0=$SECONDS
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

B="python3 -m nbkernels.matmul.bench"
F64="--dtypes f64 --sizes 1024,2048,4096,8192
     --tiles default;128,128,128,2,4,3,frag_db=1"
DB="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80
    --tiles default;128,128,64,2,2,4,frag_db=1"
TF32="--dtypes f32 --precision tf32 --sizes 4096,8192 --variant sm80
      --tiles default;256,128,64,4,2,3"
for g in F64 DB TF32; do
    timeout 240 $B ${!g} --prewarm 3 --prewarm-only > "$out/prewarm_$g.txt" 2>&1 &
done

# the GPU tests in three processes (they compile ~25 kernels), beside the prewarm
T="timeout 240 python3 -m pytest -q -p no:cacheprovider"
$T tests/test_gemm_f64_gpu.py -k sweep > "$out/tests_1.txt" 2>&1 &
$T tests/test_gemm_f64_gpu.py -k "not sweep" > "$out/tests_2.txt" 2>&1 &
$T tests/test_gemm_fragdb_gpu.py > "$out/tests_3.txt" 2>&1 &
wait
for i in 1 2 3; do
    say "GPU tests $i: $(tail -n 1 "$out/tests_$i.txt")"
    grep -E "^(FAILED|ERROR)" "$out/tests_$i.txt" | head -n 6 | cut -c1-300 >&3
done
for g in F64 DB TF32; do
    grep -q "^prewarmed" "$out/prewarm_$g.txt" ||
        { say "prewarm $g failed:"; tail -n 5 "$out/prewarm_$g.txt" >&3; }
done
say "prewarmed ($((SECONDS - t0)) s)"

timeout 120 $B $F64 --reps 20 --json "$out/bench_f64.json" || say "f64 bench rc=$?"
timeout 80 $B $DB --json "$out/bench_fragdb.json" || say "fragdb bench rc=$?"
timeout 80 $B $TF32 --json "$out/bench_tf32.json" || say "tf32 bench rc=$?"
say "benchmarks done ($((SECONDS - t0)) s); TFLOPS (ratio = cuBLAS time / nbkernels time):"
say "$($B --summary "$out"/bench_*.json 2>&1)"
