"""``python -m nbkernels demo``: the shipped intrinsics on this machine, checked against NumPy.

On a GPU the probes run there; without one, the command re-runs itself in numba's
simulator. Each probe is one kernel (an ``mma.sync`` tile, ``ldmatrix``, ``cp.async``, ...)
on fresh random inputs, compared with a NumPy reference.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time


def _run_here() -> int:
    import warnings

    from numba.core.errors import NumbaPerformanceWarning

    # One-block probes: numba's low-occupancy warning is expected and would bury the table.
    warnings.simplefilter("ignore", NumbaPerformanceWarning)
    from . import Arch
    from .arch import device_arch
    from .intrinsics import REGISTRY, probes, selfcheck

    from numba.cuda import config

    arch = None if config.ENABLE_CUDASIM else device_arch()
    where = "numba's CUDA simulator" if arch is None else f"GPU ({arch})"
    print(f"nbkernels demo: intrinsic probes on {where}")
    rng_seed = int.from_bytes(os.urandom(4), "little")
    failures = 0
    for name, probe in probes.PROBES.items():
        if arch is not None and not all(
            Arch.parse(arch).satisfies(REGISTRY[n].spec.min_arch) for n in probe.covers
        ):
            print(f"  {name:28s} skipped: needs a newer GPU")
            continue
        t0 = time.perf_counter()
        res = selfcheck.run_all(seed=rng_seed, names=[name])
        dt = time.perf_counter() - t0
        verdict = selfcheck.check(res)
        bad = [m for m in verdict.values() if m]
        failures += bool(bad)
        print(f"  {name:28s} {'FAIL ' + bad[0] if bad else 'ok'}  ({dt * 1e3:.0f} ms)")
    print(f"{len(probes.PROBES) - failures} passed, {failures} failed")
    return 1 if failures else 0


def main(args=None) -> int:
    from numba import cuda
    from numba.cuda import config

    if config.ENABLE_CUDASIM or cuda.is_available():
        return _run_here()
    print("no GPU found: running the demo in numba's CUDA simulator")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    return subprocess.call([sys.executable, "-m", "nbkernels", "demo"], env=env)
