"""Run Python code in a fresh interpreter with numba's CUDA simulator enabled."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_simulated(args, timeout=1200):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=ROOT)


def simulated_result(args, timeout=1200, what="simulated run"):
    """Run ``args`` in the simulator and return the JSON the script printed after ``RESULT``;
    the test fails with the child's output when no such line came (a crash)."""
    import json

    import pytest

    proc = run_simulated(args, timeout=timeout)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
    if not line:
        pytest.fail(f"{what} crashed:\n{proc.stdout[-2000:]}\n{proc.stderr[-6000:]}")
    return json.loads(line[0][6:])
