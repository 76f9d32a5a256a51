#!/usr/bin/env bash
# Session 10 experiment: 16-bit rows with 64 elements a thread (128 B, as float32's 32) against 32.
. tools/device-preamble.sh
CHK='
import cupy, ml_dtypes, numpy as np, nbkernels
from nbkernels.rows.rms_norm_kernel import rms_norm_ref
from nbkernels.rows.layer_norm_kernel import layer_norm_ref
from nbkernels.rows.softmax_kernel import softmax_ref
rng = np.random.default_rng()
for shape in ((300, 8192), (1000, 4096), (7, 8000)):
    xh = rng.standard_normal(shape).astype(ml_dtypes.bfloat16); wh = rng.standard_normal(shape[1]).astype(ml_dtypes.bfloat16)
    x, w = cupy.asarray(xh), cupy.asarray(wh)
    for name, got, ref in (("rms", nbkernels.rms_norm(x, w), rms_norm_ref(xh, wh)),
                           ("ln", nbkernels.layer_norm(x, w, w), layer_norm_ref(xh, wh, wh)),
                           ("sm", nbkernels.softmax(x), softmax_ref(xh))):
        e = np.abs(cupy.asnumpy(got).astype(np.float64) - ref).max() / np.abs(ref).max()
        print("check", shape, name, f"{e:.2e}", "OK" if e < 2e-2 else "BAD")
'
pids=""
for pt in 32 64; do (NBK_ROWS_PT=$pt NBKERNELS_CACHE_DIR=/tmp/nbkc$pt timeout 200 python3 -c "$CHK" 2>&1 | grep -v Warn | sed "s/^/pt$pt /") & pids="$pids $!"; done
wait $pids
echo "checks done at ${SECONDS}s"
BENCH="python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm,softmax,rms_norm_residual --dtypes bf16"
for round in 1 2; do
  for pt in 32 64; do
    echo "--- round $round PER_THREAD=$pt"
    NBK_ROWS_PT=$pt NBKERNELS_CACHE_DIR=/tmp/nbkc$pt timeout 140 $BENCH --json "$out/b_${pt}_$round.json" 2>&1 | grep -v Warning
  done
done
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
runs = {}
for f in sorted(Path(sys.argv[1]).glob("b_*.json")):
    res = json.loads(f.read_text())
    runs[f.stem[2:]] = {(r["op"], r["dtype"], "x".join(map(str, r["shape"]))): r for r in res["rows"] if "of_copy" in r}
cols = sorted(runs)
keys = sorted({k for v in runs.values() for k in v})
print("op dtype shape " + " ".join(cols))
for k in keys:
    print(" ".join(k), " ".join(f"{runs[c][k]['of_copy']*100:6.1f}" if k in runs[c] else "-" for c in cols),
          [ (runs[c][k].get("plan[auto]") or {}) for c in cols[:2] if k in runs[c]])
PY
echo "done at ${SECONDS}s"
