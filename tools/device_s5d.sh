#!/usr/bin/env bash
# Session 5, run 4 (device tool, carry .whl; about 5 minutes): every sm90a GPU test (the
# cluster cases past the one run 3 stopped at, the cluster=1 tiles on the refactored launch
# path), and how many 2-block clusters the H200 holds at once for the cluster tiles.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 256x128x4,256x128x4w,64x128x4,128x128x6p,64x256x5p,128x256x4c2,256x128x4wc2,128x128x6c2,128x128x6pc2,128x64x6c2 \
    > "$out/prewarm90.txt" 2>&1; tail -n 1 "$out/prewarm90.txt"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(tail -n 1 "$out/t_sm90a.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_sm90a.txt" | head -8
timeout 60 python3 - <<'PY'
import cupy, numpy as np, ml_dtypes
import nbkernels
from nbkernels import runner
from nbkernels.matmul import wgmma_config as wc
a = cupy.asarray(np.random.default_rng().standard_normal((4096, 4096)).astype(ml_dtypes.bfloat16))
for cfg in (wc.WgmmaConfig(128, 256, 4, cluster=2), wc.WgmmaConfig(256, 128, 4, 8, False, 128, cluster=2),
            wc.WgmmaConfig(128, 128, 6, cluster=2)):
    nbkernels.gemm(a, a, variant="sm90a", tile=cfg)
cupy.cuda.Device().synchronize()
print("SMs", cupy.cuda.Device().attributes["MultiProcessorCount"])
for k, v in runner._clusters_fit.items():
    print("clusters that fit:", v, "for", k[1:])
PY
echo "done at ${SECONDS}s"
