#!/usr/bin/env bash
# Session 13, run 2 (device tool, carry .whl): (1) validate --as sm_80 on the cases whose plan
# the target's limits change (f64 DMMA: 128x128 instead of two 128x64 blocks per SM; the row
# kernels' buffers), with the plans printed; (2) the repeat / replay / stream / thread GPU
# tests of the GEMM and the rows on this tree (the bound launch's last refactor).
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 8 -o faulthandler_timeout=200"
timeout -s ABRT 300 $T tests/test_gemm_gpu.py tests/test_rows_gpu.py \
    -k "repeat or replay or stream or place or thread" > /tmp/t.txt 2>&1 &
tp=$!
python3 - <<'PY'
import cupy, numpy as np
from nbkernels.matmul import plan
from nbkernels.smem import device_limits, planned_for
a = cupy.asarray(np.random.default_rng().standard_normal((4096, 4096)))
print("own plan f64 4096^3:", device_limits(), plan(a, a).tile)
with planned_for("sm_80"):
    print("as sm_80:          ", device_limits(), plan(a, a).tile)
PY
timeout -s ABRT 280 python3 -m nbkernels validate --as sm_80 \
    --only "gemm/dmma/f64/*,rows/layer_norm/f32/*,rows/rms_norm/bf16/*" 2>&1 | tail -n 16
wait $tp
echo "tests rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -10
echo "done at ${SECONDS}s"
