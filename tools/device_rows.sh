#!/usr/bin/env bash
# Row kernels on the H200 (issue #5): the GPU tests, then the benchmark at 8192 x 8192 and
# 32768 x 4096 (bf16, f32; % of the copy bandwidth measured in the same run, x torch eager)
# timing each op under NBKERNELS_ROWS_LOOP unset (auto: blocks loop over rows, grid sized
# from the kernel's registers), 0 (a block per row: the layout before the loop), 1 and 2
# (looping, one / two staging buffers) on the same inputs, plus wall time per call at 1 x 4096
# and 64 x 4096. Then, if time is left, compute-sanitizer racecheck on a few blocks walking
# many rows. Under 6 minutes; output goes to $OUT/log.txt as it comes, JSON to
# $OUT/rows_bench.json after every measurement.
# Usage (device tool, carry .whl): bash tools/device_rows.sh
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
par=""
python3 -c "import xdist" 2>/dev/null && par="-n 16"
timeout 200 python3 -m pytest tests/test_rows_gpu.py -q -x $par -p no:cacheprovider 2>&1 \
    | grep -v "^\[gw" | tail -20
echo "tests rc=$? at ${SECONDS}s"
python3 -m nbkernels.rows.bench --host
timeout 150 python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes auto,0,1,2 \
    --json "$out/rows_bench.json"
echo "bench rc=$? at ${SECONDS}s"
left=$((340 - SECONDS))
if ((left > 20)); then
    cat > /tmp/rows_race.py <<'EOF'
import sys
import numpy as np
sys.path.insert(0, "tests")
from row_cases import run_case
fails = []
for case in [("rms_norm_residual", "bfloat16", (40, 2000), "contig", None, "loop1"),
             ("layer_norm", "float32", (40, 2000), "contig", None, "loop2"),
             ("softmax", "float16", (40, 1000), "contig", None, "warploop"),
             ("swiglu", "bfloat16", (3, 9000), "contig", None, "splitloop")]:
    fails += run_case(case, np.random.default_rng(), "cupy", with_out=False)
print("\n".join(fails) or "racecheck cases ok")
EOF
    timeout $left compute-sanitizer --tool racecheck --print-limit 5 python3 /tmp/rows_race.py \
        2>&1 | tail -8
    echo "racecheck rc=$? at ${SECONDS}s"
fi
