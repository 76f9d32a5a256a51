#!/usr/bin/env bash
# Session 11, run 1 (device tool, carry .whl): three questions in one call.
#   1. sm80-class bf16 tiles with more K per barrier (bk_bytes 128) and 8-warp tiles at
#      4096^3 / 8192^3, beside the default and cuBLAS (issue #3's 390 TFLOPS);
#   2. float64 with 3 stages instead of 4 for the default tile (perf-notes d4 saw +1.3-1.5%);
#   3. the host cost of small calls (tools/host_parts.py --calls), the machine otherwise idle.
. tools/device-preamble.sh  # environment, log, GPU
B="python3 -m nbkernels.matmul.bench"
BF="--dtypes bf16 --sizes 4096,8192 --variant sm80
    --tiles default;128,128,128,2,2,3;128,256,64,2,4,3;256,128,64,4,2,3;128,256,128,2,4,2"
F64="--dtypes f64 --sizes 2048,4096,8192
     --tiles default;128,64,128,2,2,3,min_blocks=2"
pids=""
for g in BF F64; do
    timeout 300 $B ${!g} --prewarm 6 --prewarm-only > "$out/prewarm_$g.txt" 2>&1 &
    pids="$pids $!"
done
timeout 300 python3 -c "
import cupy, numpy as np, nbkernels
from nbkernels.arrays import BF16
x = cupy.asarray(np.random.default_rng().standard_normal((1, 4096)).astype(BF16))
w = cupy.asarray(np.random.default_rng().standard_normal(4096).astype(BF16))
nbkernels.rms_norm(x, w); a = cupy.asarray(np.ones((128, 128), BF16)); nbkernels.gemm(a, a)
" > "$out/warm_small.txt" 2>&1 &
pids="$pids $!"
wait $pids
for g in BF F64; do echo "prewarm $g: $(tail -n 1 $out/prewarm_$g.txt)"; done
echo "compiled at ${SECONDS}s"
timeout 60 python3 tools/host_parts.py --calls > "$out/host.txt" 2>&1
echo "host rc=$?"; cat "$out/host.txt" | tail -n 12
for g in BF F64; do
    timeout 200 $B ${!g} --json "$out/bench_$g.json" > "$out/bench_$g.txt" 2>&1
    echo "bench $g rc=$?"
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_*.json
echo "done at ${SECONDS}s"
