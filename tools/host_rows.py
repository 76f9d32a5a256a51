"""Where the wall time of a small row call goes (device machine): wall per call of back-to-back
rms_norm calls at 1 x 4096 and 64 x 4096 bf16 on CuPy arrays (with and without out=), an empty
launch for scale (the rows benchmark's own measures), and a cProfile of the repeat path. Issue
#5 asks for small calls within 1.5x of an empty launch. ``python tools/host_rows.py``"""
import cProfile
import pstats

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16
from nbkernels.rows.bench import _wall_per_call, empty_launches

rng = np.random.default_rng()
print("empty launch: " + ", ".join(f"{k} {v * 1e6:.1f} us/call" for k, v in
                                   empty_launches().items()))
for rows in (1, 64):
    x = cupy.asarray(rng.standard_normal((rows, 4096)).astype(BF16))
    w = cupy.asarray(rng.standard_normal(4096).astype(BF16))
    out = cupy.empty_like(x)
    plain = _wall_per_call(nbkernels.rms_norm, (x, w)) * 1e6
    given = _wall_per_call(lambda: nbkernels.rms_norm(x, w, out=out), ()) * 1e6
    print(f"rms_norm {rows}x4096 bf16: {plain:.1f} us/call, out= {given:.1f}")
    if rows == 1:
        print(f"  cupy.empty_like alone {_wall_per_call(cupy.empty_like, (x,)) * 1e6:.1f} us/call")
prof = cProfile.Profile()
prof.enable()
for _ in range(3000):
    nbkernels.rms_norm(x, w)
cupy.cuda.Device().synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(18)
