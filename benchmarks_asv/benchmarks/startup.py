"""Compile and start time: the first nbkernels.gemm call of a new process, with an empty kernel
cache (compiles) and with the cache that first process filled (loads cubins from disk).

Both are one-shot measurements in fresh interpreters (a second measurement in the same process
would find the kernel in memory), taken once per commit; f16 2048^3 with the default variant
(f16 runs on every GPU nbkernels supports, sm_75 included).
"""
from __future__ import annotations

from ._common import Family, check_installed_commit, gpu_skip_reason, measure_cases

_CHILD = r"""
import json, time
t0 = time.perf_counter()
import cupy
import nbkernels
t1 = time.perf_counter()
a = cupy.ones((2048, 2048), cupy.float16)
b = cupy.ones((2048, 2048), cupy.float16)
out = cupy.empty((2048, 2048), cupy.float16)
cupy.cuda.Device().synchronize()
t2 = time.perf_counter()
nbkernels.gemm(a, b, out=out)
cupy.cuda.Device().synchronize()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_call": t3 - t2}))
"""


def _first_call(cache_dir):
    """{"import": s, "first_call": s} of a new interpreter using ``cache_dir`` as kernel cache."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NBKERNELS_CACHE_DIR=str(cache_dir))
    env.pop("NBKERNELS_AUTOTUNE", None)  # a tuning run would be timed as the first call
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"first-call process exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _measure(_case):
    import tempfile

    with tempfile.TemporaryDirectory(prefix="nbk-cold-cache-") as cache_dir:
        cold = _first_call(cache_dir)
        warm = _first_call(cache_dir)
    return {"cold": cold["first_call"], "warm": warm["first_call"], "import": warm["import"]}


def measure(_bench=None):
    check_installed_commit()
    why = gpu_skip_reason()
    if why:
        return {"skip": why}
    return {"cases": measure_cases([("Startup",)], _measure)}


measure.timeout = 900


class Startup(Family):
    setup_cache = measure

    def track_cold_compile(self, cache):
        """First call with an empty kernel cache: compile, link, load, run."""
        return self.value(cache, (), "cold")

    track_cold_compile.unit = "seconds"

    def track_warm_start(self, cache):
        """First call of a new process whose kernel cache is filled: cubin from disk, run."""
        return self.value(cache, (), "warm")

    track_warm_start.unit = "seconds"

    def track_import(self, cache):
        """``import cupy, nbkernels`` in that new process."""
        return self.value(cache, (), "import")

    track_import.unit = "seconds"
