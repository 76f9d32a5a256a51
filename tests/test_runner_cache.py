"""runner's in-process build cache, on the CPU (the build and the module load stubbed): a kernel
gets its own build even where Python hands it the id of a kernel that was freed.

Found on the H200 (session 47, run D): tests/test_hopper_gpu.py built one kernel per cluster
shape; the cluster-of-4 kernel received the freed cluster-of-2 kernel's id, the cache (keyed
by id) returned the cluster-of-2 build, and its launch in clusters of 4 failed with
CUDA_ERROR_INVALID_CLUSTER_SIZE."""
import types as pytypes

import pytest

from nbkernels import launch, runner
from nbkernels.arch import Arch


@pytest.fixture
def stubbed(monkeypatch):
    builds = []

    def build(pyfunc, sig, arch, key, bounds, cluster):
        builds.append((pyfunc, key, cluster))
        return f"cubin of {pyfunc.__name__} {cluster}".encode(), pyfunc.__name__

    monkeypatch.setattr(launch, "cache_key",  # the real one asks the driver for its version
                        lambda name, parts, arch, cluster=None: f"{name}-{parts}-{cluster}")
    monkeypatch.setattr(launch, "build", build)
    monkeypatch.setattr(runner, "build_unpersisted",
                        lambda k, sig, arch, key, bounds, cluster: build(k.py_func, sig, arch,
                                                                         key, bounds, cluster))
    monkeypatch.setattr(launch, "function", lambda key, cubin, name, smem: (key, cubin))
    monkeypatch.setattr(runner, "_built", {})
    return builds


def _kernel(name, cluster):
    def body():
        pass

    body.__name__ = body.__qualname__ = name
    return pytypes.SimpleNamespace(py_func=body, nbk_cluster=cluster)


@pytest.mark.parametrize("last", [None, "user epilogue"])  # persisted, and in memory only
def test_a_kernel_given_a_freed_kernels_id_gets_its_own_build(stubbed, monkeypatch, last):
    monkeypatch.setattr(runner, "id", lambda obj: 7, raising=False)  # every kernel: one id
    arch = Arch.parse("sm_90")
    two, four = _kernel("k", (2, 1, 1)), _kernel("k", (4, 1, 1))
    _, (_, cubin2) = runner._function(two, ("sig",), arch, ("t", 2, last), 0)
    _, (_, cubin4) = runner._function(four, ("sig",), arch, ("t", 4, last), 0)
    assert cubin2 == b"cubin of k (2, 1, 1)"
    assert cubin4 == b"cubin of k (4, 1, 1)"
    assert [c for _, _, c in stubbed] == [(2, 1, 1), (4, 1, 1)]


def test_the_same_kernel_is_built_once(stubbed):
    arch = Arch.parse("sm_90")
    k = _kernel("k", None)
    first = runner._function(k, ("sig",), arch, ("t", None), 0)
    assert runner._function(k, ("sig",), arch, ("t", None), 0) == first
    assert len(stubbed) == 1
