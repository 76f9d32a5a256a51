"""What the rows' replay overlap guard costs a repeat call, in one process on the device: a
1 x 4096 bf16 rms_norm with ``out=`` timed with the recorded replay's guards and with them
removed, alternated (perf-notes, session 14). ``python tools/guard_cost.py``"""
import time

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16
from nbkernels.rows import host

rng = np.random.default_rng()
x = cupy.asarray(rng.standard_normal((1, 4096)).astype(BF16))
w = cupy.asarray(rng.standard_normal(4096).astype(BF16))
out = cupy.empty_like(x)
for _ in range(3):
    nbkernels.rms_norm(x, w, out=out)
cupy.cuda.runtime.deviceSynchronize()
reps = [r for r in host._FAST.values() if r.guards]
assert len(reps) == 1, len(reps)
rep, guards = reps[0], reps[0].guards


def per_call(n=20000):
    t0 = time.perf_counter()
    for _ in range(n):
        nbkernels.rms_norm(x, w, out=out)
    cupy.cuda.runtime.deviceSynchronize()
    return (time.perf_counter() - t0) / n * 1e6


res = {"guards": [], "none": []}
for _ in range(6):
    for name, g in (("guards", guards), ("none", ())):
        rep.guards = g
        per_call(2000)
        res[name].append(per_call())
for name, v in res.items():
    checks = sum(len(c) for _, c in guards) if name == "guards" else 0
    print(f"{name:7s} {checks} checks: median "
          f"{np.median(v):.2f} us/call  (rounds {' '.join(f'{t:.2f}' for t in v)})")
