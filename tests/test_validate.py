"""nbkernels validate --as: the PTX mode of the launcher, the case table, the checks, and on a GPU
the sm_80-class GEMM run through the driver's JIT."""
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import types

from nbkernels import launch
from nbkernels.arch import Arch
from nbkernels.matmul import aot as gemm_aot

from .conftest import GPU_CC
from .simrun import ROOT


def _axpy(x, y):
    y[0] = x[0] * 2.0 + y[0]


SIG = (types.float32[::1], types.float32[::1])


def test_driver_jit_builds_nul_terminated_ptx_for_the_named_arch(tmp_path, monkeypatch):
    monkeypatch.setenv("NBKERNELS_CACHE_DIR", str(tmp_path))
    with launch.driver_jit():
        image, entry = launch.build(_axpy, SIG, Arch(8, 0), "axpy-ptx")
    assert image.endswith(b"\0") and b".target sm_80" in image and entry.encode() in image
    assert (tmp_path / "axpy-ptx.ptx").exists() and not (tmp_path / "axpy-ptx.cubin").exists()
    again, _ = launch.build(_axpy, SIG, Arch(8, 0), "axpy-ptx")  # outside: the cubin path
    assert again[:4] == b"\x7fELF"


def test_cache_key_depends_on_the_image_kind(monkeypatch):
    from numba.cuda.cudadrv.driver import driver

    monkeypatch.setattr(driver, "get_version", lambda: (13, 0), raising=False)
    plain = launch.cache_key("k", ("a",), Arch(8, 0))
    with launch.driver_jit():
        jit = launch.cache_key("k", ("a",), Arch(8, 0))
    assert plain != jit and plain == launch.cache_key("k", ("a",), Arch(8, 0))


def test_case_tables():
    sm80 = {c.name for c in gemm_aot.cases(Arch(8, 0))}
    for kind in ("f16", "bf16", "tf32", "3xtf32", "s8"):
        assert any(n.startswith(f"gemm/sm80/{kind}/") for n in sm80), kind
    assert {"gemm/sm80/f16/split-k", "gemm/sm80/s8/misaligned", "gemm/simt/f64/main"} <= sm80
    sm75 = {c.name for c in gemm_aot.cases(Arch(7, 5))}
    assert sm75 and all(n.startswith(("gemm/sm75/f16/", "gemm/simt/")) for n in sm75)
    used = {s for table in gemm_aot.CASES.values() for shapes in table.values() for s in shapes}
    assert used == set(gemm_aot.SHAPES)
    assert set(gemm_aot.TOLERANCES) == {k for t in gemm_aot.CASES.values() for k in t}


def test_checks_catch_unwritten_and_wrong_outputs():
    want = np.arange(12.0).reshape(3, 4)
    got = want.copy()
    got[1, 2] = np.nan
    err, where = gemm_aot._relerr(got, want)
    assert err == float("inf") and "(1, 2)" in where
    got = want.copy()
    got[2, 3] += 1.0
    err, where = gemm_aot._relerr(got, want)
    assert err > 0 and "(2, 3)" in where
    a = np.array([[1.0 + 2.0 ** -12]], np.float32)  # tf32 keeps 10 mantissa bits: rounds to 1
    assert gemm_aot._reference(a, np.ones((1, 1), np.float32), None, 1, 0, "tf32")[0, 0] == 1.0
    assert gemm_aot._reference(a, np.ones((1, 1), np.float32), None, 1, 0, "3xtf32")[0, 0] > 1.0


def _validate(*args):
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run([sys.executable, "-m", "nbkernels", "validate", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200)


@pytest.mark.skipif(GPU_CC is not None, reason="checks the no-GPU answer")
def test_validate_without_gpu_says_so():
    proc = _validate("--as", "sm_80")
    assert proc.returncode == 2 and "no GPU here" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.gpu
@pytest.mark.min_cc(8, 0)
def test_validate_as_sm80_on_this_gpu():
    proc = _validate("--as", "sm_80", "--only", "gemm/sm80/bf16/main,gemm/simt/f32/main")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    assert "2 passed, 0 failed" in out and ".target sm_80" in out, out


@pytest.mark.gpu
@pytest.mark.min_cc(8, 0)
def test_cubin_of_another_major_is_a_diagnosed_error(tmp_path, monkeypatch):
    from nbkernels.compat import CompatibilityError

    monkeypatch.setenv("NBKERNELS_CACHE_DIR", str(tmp_path))
    cubin, entry = launch.build(_axpy, SIG, Arch(7, 5), "axpy-sm75")  # no 8.x/9.x GPU runs it
    with pytest.raises(CompatibilityError, match="wrong-arch|built for sm_75"):
        launch.function("axpy-sm75", cubin, entry, 0)
