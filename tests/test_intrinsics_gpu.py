"""On a real GPU: every probe against NumPy, and the simulator's bits against the GPU's."""
import numpy as np
import pytest
from numba import cuda, float32, types

import nbkernels
from nbkernels.arch import device_arch
from nbkernels.intrinsics import REGISTRY, probes, selfcheck

from .conftest import GPU_CC
from .simrun import run_simulated

pytestmark = pytest.mark.gpu


def _runnable(name):
    if GPU_CC is None:
        return False
    arch = device_arch()  # an sm_90 GPU runs sm_90a code; the Hopper probes compile for it
    return all(arch.satisfies(REGISTRY[n].spec.min_arch) for n in probes.PROBES[name].covers)


@pytest.fixture(scope="module")
def gpu_result():
    names = [n for n in probes.PROBES if _runnable(n)]
    return selfcheck.run_all(names=names)


@pytest.mark.parametrize("mode", selfcheck.MODES)
@pytest.mark.parametrize("name", list(probes.PROBES))
def test_probe_on_gpu_matches_numpy(gpu_result, name, mode):
    if not _runnable(name):
        pytest.skip(f"{name} needs a newer GPU than {GPU_CC}")
    probe = probes.PROBES[name]
    ins = {k.split("|")[3]: v for k, v in gpu_result.items() if k.startswith(f"{name}|{mode}|in|")}
    outs = {k.split("|")[3]: v for k, v in gpu_result.items() if k.startswith(f"{name}|{mode}|out|")}
    msg = probes.mismatch(probe, outs, probe.reference(ins), exact=(mode == "exact"))
    assert msg is None, msg


def test_simulator_gives_the_gpus_bits(gpu_result, tmp_path):
    """Replay the GPU's inputs in the simulator; exact-mode outputs must match bit for bit."""
    np.savez(tmp_path / "gpu.npz", **gpu_result)
    names = sorted({k.split("|")[0] for k in gpu_result})
    args = ["-m", "nbkernels.intrinsics.selfcheck", "--inputs", str(tmp_path / "gpu.npz"),
            "--out", str(tmp_path / "sim.npz")]
    for n in names:
        args += ["--probe", n]
    proc = run_simulated(args)
    assert (tmp_path / "sim.npz").exists(), proc.stderr[-4000:]
    sim = dict(np.load(tmp_path / "sim.npz"))
    exact = {k: v for k, v in gpu_result.items() if "|exact|" in k}
    diffs = selfcheck.compare_bits(exact, sim)
    assert not diffs, diffs
    # Integer, conversion and data-movement probes are exact in every mode; float MMAs sum
    # in the tensor core's order, not NumPy's.
    other = {k: v for k, v in gpu_result.items()
             if "|random|" in k and not k.startswith("mma_m16n8k8_tf32")
             and not (k.startswith("mma_") and "_s32" not in k.split("|")[0])
             and not (k.startswith("wgmma_") and not k.startswith("wgmma_int8"))}
    diffs = selfcheck.compare_bits(other, sim)
    assert not diffs, diffs


@cuda.jit
def _big_smem_kernel(x, out):
    buf = cuda.shared.array(0, float32)
    tid = cuda.threadIdx.x
    n = x.size
    for i in range(tid, n, cuda.blockDim.x):
        buf[i] = x[i]
    cuda.syncthreads()
    if tid == 0:
        s = float32(0)
        for i in range(n):
            s += buf[n - 1 - i]
        out[0] = s


def test_dynamic_shared_memory_above_48k():
    n = 100 * 1024 // 4
    nbytes = n * 4
    rng = np.random.default_rng()
    x = rng.integers(-100, 100, n).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    sig = (types.float32[::1], types.float32[::1])
    nbkernels.enable_large_shared_memory(_big_smem_kernel, sig, nbytes)
    _big_smem_kernel[1, 256, 0, nbytes](x, out)
    assert out[0] == x.astype(np.float64).sum()


def test_dynamic_shared_memory_over_the_device_limit_is_a_clear_error():
    limit = nbkernels.max_dynamic_shared_memory()
    assert limit > 48 * 1024
    with pytest.raises(nbkernels.NbkernelsError, match=r"exceeds what one block may use"):
        nbkernels.enable_large_shared_memory(
            _big_smem_kernel, (types.float32[::1], types.float32[::1]), limit + 16)
