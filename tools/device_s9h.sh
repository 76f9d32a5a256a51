#!/usr/bin/env bash
# Session 9, run 8: the two 256-thread losses of r12 (softmax f32 and layer_norm bf16 at
# 8192^2): the default plan against a forced number of looping blocks (2 or 3 per SM) and
# staging buffers (RowConfig), timed with CUDA events beside a 1 GiB copy in one process.
. tools/device-preamble.sh  # environment, log, GPU
timeout 300 python3 - <<'PY'
import cupy, ml_dtypes, numpy as np, nbkernels
from nbkernels.rows.config import RowConfig
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
def med(f, reps=25):
    f(); cupy.cuda.Device().synchronize()
    s, e, ts = cupy.cuda.Event(), cupy.cuda.Event(), []
    for _ in range(reps):
        s.record(); f(); e.record(); e.synchronize(); ts.append(cupy.cuda.get_elapsed_time(s, e))
    return float(np.median(ts)) * 1e-3
a = cupy.empty(1 << 29, cupy.uint8); b = cupy.empty_like(a)
copy = 2 * a.nbytes / med(lambda: b.__setitem__(Ellipsis, a))
print(f"copy {copy / 1e9:.0f} GB/s")
rng = np.random.default_rng()
for op, dt in (("softmax", np.float32), ("layer_norm", ml_dtypes.bfloat16)):
    x = cupy.asarray(rng.standard_normal((8192, 8192)).astype(dt))
    w = cupy.asarray(rng.standard_normal(8192).astype(dt)); out = cupy.empty_like(x)
    call = (lambda cfg: nbkernels.softmax(x, out=out, config=cfg)) if op == "softmax" else \
        (lambda cfg: nbkernels.layer_norm(x, w, w, out=out, config=cfg))
    moved = 2 * x.nbytes
    for cfg in (None, RowConfig("block", 256, blocks=2 * sms, buffers=1),
                RowConfig("block", 256, blocks=2 * sms, buffers=2),
                RowConfig("block", 256, blocks=3 * sms, buffers=1),
                RowConfig("block", 256, blocks=3 * sms, buffers=2)):
        try:
            t = med(lambda: call(cfg))
            print(f"{op:10s} {np.dtype(dt).name:8s} {str(cfg and (cfg.blocks, cfg.buffers)):10s} "
                  f"{t * 1e6:7.1f} us {moved / t / copy * 100:5.1f}% of copy")
        except Exception as ex:
            print(op, cfg, "error", str(ex)[:200])
PY
echo "done at ${SECONDS}s"
