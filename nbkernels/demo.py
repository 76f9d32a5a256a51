"""``python -m nbkernels demo``: the main job, a GEMM on this machine, checked and timed.

On a GPU: a bf16 GEMM (2048^3 by default) through ``nbkernels.gemm`` on CuPy arrays, checked
against a float64 reference, timed as the benchmarks time it (``matmul.bench._time``: device
time from CUDA events, each call queued behind a spin kernel so that the host's Python in front
of it is not counted, inputs rotating beyond L2, median of 20), and compared with
``cupy.matmul`` (cuBLAS) timed the same way on the same inputs in the same process. Without a
GPU the command re-runs itself in numba's simulator and does a small GEMM through the same
kernel code. ``--probes`` also runs every intrinsic's probe kernel against NumPy.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings

import numpy as np


def _relerr(got, want):
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def _gpu_gemm(n: int) -> int:
    import cupy

    import nbkernels
    from nbkernels.matmul import plan
    from nbkernels.matmul.bench import _time, rotation_count

    rng = np.random.default_rng()
    dt = nbkernels.arrays.BF16
    count = rotation_count(2 * n * n * 2, cupy.cuda.Device().attributes["L2CacheSize"])
    sets = [tuple(cupy.asarray(rng.standard_normal((n, n), np.float32).astype(dt))
                  for _ in range(2)) for _ in range(count)]
    a, b = sets[0]
    out = cupy.full((n, n), np.nan, np.float32).astype(dt)
    p = plan(a, b, out=out)
    t0 = time.perf_counter()
    nbkernels.gemm(a, b, out=out)
    cupy.cuda.Device().synchronize()
    first = time.perf_counter() - t0
    af = cupy.asnumpy(a).astype(np.float64)
    bf = cupy.asnumpy(b).astype(np.float64)
    err = _relerr(cupy.asnumpy(out).astype(np.float64), af @ bf)

    # Device time of a call (bench._time: each timed call queued behind a spin kernel, so the
    # events hold the kernels and not the Python in front of them; inputs rotating among
    # sets three times the size of L2; median), and the host's own time per call beside it.
    t_nbk = _time(lambda x, y: nbkernels.gemm(x, y, out=out), sets, 20)[0]
    host_nbk = _time.host_seconds
    peer, t_peer = _cublas_seconds(sets, _time)
    flops = 2.0 * n ** 3
    ok = err < 1e-2
    print(f"nbkernels demo: bf16 GEMM {n}x{n}x{n} on {nbkernels.arch.device_arch()}")
    print(f"  variant     {p.variant}, {p.tile}")
    print(f"  first call  {first * 1e3:.0f} ms (compile or disk cache, then run)")
    print(f"  time        {t_nbk * 1e3:.3f} ms  ->  {flops / t_nbk / 1e12:.1f} TFLOPS "
          f"(device time; the host spends {host_nbk * 1e6:.0f} us a call)")
    if peer is None:
        print(f"  cuBLAS      not timed: {t_peer}")
    else:
        print(f"  {peer:11s} {t_peer * 1e3:.3f} ms  ->  {flops / t_peer / 1e12:.1f} TFLOPS "
              f"(cuBLAS, same inputs, same timing)")
        print(f"  ratio       {t_peer / t_nbk:.2f}x the speed of {peer}")
    print(f"  check       relative error {err:.1e} vs float64 ({'ok' if ok else 'FAIL'})")
    return 0 if ok else 1


def _cublas_seconds(sets, timer):
    """(peer name, device seconds a call) of cupy.matmul on ``sets``, or (None, why not): in
    bf16, else in f16 where this CuPy has no bf16 GEMM; a CuPy without cuBLAS (``pip install
    cupy-cuda13x`` alone does not bring it; nbkernels' ``cupy`` extra does) leaves the demo's
    own result and check standing."""
    import cupy

    try:
        out = cupy.empty(sets[0][0].shape[:1] + sets[0][1].shape[1:], sets[0][0].dtype)
        return "cupy.matmul", timer(lambda x, y: cupy.matmul(x, y, out=out), sets, 20)[0]
    except Exception:  # CuPy builds without bf16 GEMM: f16 instead
        pass
    try:
        sets16 = [(x.astype(cupy.float16), y.astype(cupy.float16)) for x, y in sets]
        out = cupy.empty(sets16[0][0].shape[:1] + sets16[0][1].shape[1:], cupy.float16)
        return ("cupy.matmul (f16)",
                timer(lambda x, y: cupy.matmul(x, y, out=out), sets16, 20)[0])
    except Exception as e:  # no cuBLAS library found, say
        return None, f"cupy.matmul failed: {type(e).__name__}: {e}"


def _sim_gemm(m=48, n=40, k=72) -> int:
    import nbkernels

    rng = np.random.default_rng()
    dt = nbkernels.arrays.BF16
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    p = nbkernels.matmul.plan(a, b)
    t0 = time.perf_counter()
    d = nbkernels.gemm(a, b)
    dt_s = time.perf_counter() - t0
    err = _relerr(d.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
    ok = err < 1e-2
    print(f"nbkernels demo: bf16 GEMM {m}x{n}x{k} in numba's CUDA simulator (no GPU)")
    print(f"  variant     {p.variant} kernel code, {p.tile}")
    print(f"  time        {dt_s:.1f} s (simulated: every thread is a Python thread; no TFLOPS)")
    print(f"  check       relative error {err:.1e} vs float64 ({'ok' if ok else 'FAIL'})")
    return 0 if ok else 1


def _probes() -> int:
    from . import Arch
    from .arch import device_arch
    from .intrinsics import REGISTRY, probes, selfcheck
    from numba.cuda import config

    arch = None if config.ENABLE_CUDASIM else device_arch()
    failures = 0
    for name, probe in probes.PROBES.items():
        if arch is not None and not all(
                Arch.parse(arch).satisfies(REGISTRY[n].spec.min_arch) for n in probe.covers):
            print(f"  {name:30s} skipped: needs a newer GPU")
            continue
        verdict = selfcheck.check(selfcheck.run_all(names=[name]))
        bad = [m for m in verdict.values() if m]
        failures += bool(bad)
        print(f"  {name:30s} {'FAIL ' + bad[0] if bad else 'ok'}")
    print(f"intrinsic probes: {len(probes.PROBES) - failures} passed, {failures} failed")
    return 1 if failures else 0


def add_arguments(ap: argparse.ArgumentParser):
    ap.add_argument("--size", type=int, default=2048, help="GEMM size on a GPU (default 2048)")
    ap.add_argument("--probes", action="store_true", help="also run every intrinsic's probe")


def main(opts) -> int:
    from numba import cuda
    from numba.core.errors import NumbaPerformanceWarning
    from numba.cuda import config

    warnings.simplefilter("ignore", NumbaPerformanceWarning)
    if not config.ENABLE_CUDASIM and not cuda.is_available():
        print("no GPU found: running the demo in numba's CUDA simulator")
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        argv = ["--size", str(opts.size)] + (["--probes"] if opts.probes else [])
        return subprocess.call([sys.executable, "-m", "nbkernels", "demo", *argv], env=env)
    rc = _sim_gemm() if config.ENABLE_CUDASIM else _gpu_gemm(opts.size)
    if opts.probes:
        rc |= _probes()
    return rc
