"""``python -m nbkernels demo``, the README's main job: in numba's simulator on any machine,
on the GPU where there is one. Its output is checked, not its speed (speed is the benchmarks'
business)."""
import os
import re
import subprocess
import sys

import pytest

from .simrun import ROOT, run_simulated

FAILING = r'''
import numpy as np
import nbkernels
from nbkernels import demo
nbkernels.gemm = lambda a, b: np.zeros((a.shape[0], b.shape[1]), a.dtype)  # a wrong result
raise SystemExit(demo._sim_gemm())
'''


def test_demo_runs_in_the_simulator_and_checks_its_gemm():
    proc = run_simulated(["-m", "nbkernels", "demo"], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "in numba's CUDA simulator" in proc.stdout
    err = re.search(r"relative error (\S+) vs float64 \(ok\)", proc.stdout)
    assert err and float(err.group(1)) < 1e-2, proc.stdout


def test_demo_fails_loudly_on_a_wrong_result(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    proc = run_simulated([str(script)], timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert re.search(r"relative error 1\.0e\+00 vs float64 \(FAIL\)", proc.stdout), proc.stdout


@pytest.mark.gpu
@pytest.mark.min_cc(8, 0)
def test_demo_on_the_gpu_checks_and_times_against_cublas():
    pytest.importorskip("cupy")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-m", "nbkernels", "demo", "--size", "1024"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    assert "bf16 GEMM 1024x1024x1024 on sm_" in out
    ours = re.search(r"time +\S+ ms +-> +(\S+) TFLOPS \(device time; the host spends (\d+) us", out)
    peer = re.search(r"cupy\.matmul(?: \(f16\))? +\S+ ms +-> +(\S+) TFLOPS", out)
    ratio = re.search(r"ratio +(\S+)x the speed of cupy\.matmul", out)
    assert ours and peer and ratio, out
    assert float(ours.group(1)) > 0 and float(peer.group(1)) > 0 and float(ratio.group(1)) > 0
    assert re.search(r"relative error \S+ vs float64 \(ok\)", out), out


class _FakeCupy:
    """Just what demo._cublas_seconds touches: arrays are (shape, dtype) pairs, and matmul
    fails as told (the CuPy error for a missing cuBLAS, or for a dtype it has no GEMM for)."""

    float16 = "float16"

    def __init__(self, fails):
        self.fails, self.calls = fails, []

    class Arr:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

        def astype(self, dtype):
            return _FakeCupy.Arr(self.shape, dtype)

    def empty(self, shape, dtype):
        return self.Arr(shape, dtype)

    def matmul(self, x, y, out):
        self.calls.append(x.dtype)
        if x.dtype in self.fails:
            raise RuntimeError(f"CUDA library libcublas not found ({x.dtype})")


def _peer(monkeypatch, fails):
    from nbkernels import demo

    fake = _FakeCupy(fails)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    sets = [(fake.Arr((8, 4), "bfloat16"), fake.Arr((4, 6), "bfloat16"))] * 2

    def timer(fn, sets, reps):  # the benchmark timer's shape: (median seconds, samples)
        for s in sets:
            fn(*s)
        return 1e-3, [1e-3] * reps

    return demo._cublas_seconds(sets, timer), fake.calls


def test_the_demo_times_cupy_matmul_in_bf16_else_f16_else_says_why_not(monkeypatch):
    assert _peer(monkeypatch, ()) == (("cupy.matmul", 1e-3), ["bfloat16"] * 2)
    got, calls = _peer(monkeypatch, ("bfloat16",))
    assert got == ("cupy.matmul (f16)", 1e-3) and calls == ["bfloat16", "float16", "float16"]
    (name, why), _ = _peer(monkeypatch, ("bfloat16", "float16"))
    assert name is None and why == ("cupy.matmul failed: RuntimeError: CUDA library libcublas "
                                    "not found (float16)")
