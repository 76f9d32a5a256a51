"""The README's kernel example runs and gives A @ B (simulator here, GPU when present)."""
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nbkernels.intrinsics.mma import b_m16n8k16_16bit, acc_m16n8

from .simrun import run_simulated

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLE = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)

DRIVER = r'''
import sys
d = np.load(sys.argv[1])
out = np.full((32, 4), np.nan, np.float32)
tile[1, 32, 0, 512](d["a"], d["b"], out)
np.save(sys.argv[2], out)
'''


def _inputs():
    rng = np.random.default_rng()
    A = (rng.integers(-8, 9, (16, 16)) * 0.5).astype(ml_dtypes.bfloat16)
    B = (rng.integers(-8, 9, (16, 8)) * 0.25).astype(ml_dtypes.bfloat16)
    bits = B.view(np.uint16).astype(np.uint32)
    frag = np.zeros((32, 2), np.uint32)
    for lane in range(32):
        for r in range(2):
            lo = bits[b_m16n8k16_16bit(lane, 2 * r)]
            hi = bits[b_m16n8k16_16bit(lane, 2 * r + 1)]
            frag[lane, r] = lo | (hi << 16)
    want = np.zeros((32, 4), np.float32)
    D = A.astype(np.float64) @ B.astype(np.float64)
    for lane in range(32):
        for i in range(4):
            want[lane, i] = D[acc_m16n8(lane, i)]
    return A.view(np.uint16), frag, want


def test_readme_example_in_simulator(tmp_path):
    a, b, want = _inputs()
    np.savez(tmp_path / "in.npz", a=a, b=b)
    script = tmp_path / "example.py"
    script.write_text(EXAMPLE + DRIVER)
    proc = run_simulated([str(script), str(tmp_path / "in.npz"), str(tmp_path / "out.npy")])
    assert proc.returncode == 0, proc.stderr[-3000:]
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), want)


@pytest.mark.gpu
@pytest.mark.min_cc(8, 0)
def test_readme_example_on_gpu():
    a, b, want = _inputs()
    ns = {}
    exec(EXAMPLE, ns)
    out = np.full((32, 4), np.nan, np.float32)
    ns["tile"][1, 32, 0, 512](a, b, out)
    np.testing.assert_array_equal(out, want)
