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
