"""Running nbkernels' own numba kernels: flat byte buffers over user arrays, results in the
caller's framework, and one launch function (numba's launch in the simulator, the cached cubin
through ``cuLaunchKernel`` on a GPU). Shared by the GEMM and the row kernels.
"""
from __future__ import annotations

import os

import numpy as np
from numba import cuda, types

from . import arrays, launch
from .errors import NbkernelsError


def simulated() -> bool:
    from numba.cuda import config

    return bool(config.ENABLE_CUDASIM)



def extent(view) -> int:
    """Elements from the first to one past the last element (non-negative strides; 1 for an
    empty array)."""
    return arrays.span(view.shape, view.strides, 1)[1] or 1


def flat(view, dtype):
    """A 1-D array of ``dtype`` starting at ``view``'s first element and covering all of it."""
    if view.size == 0:  # K == 0: the kernel reads nothing from this operand
        if view.host:
            return np.zeros(16, dtype)
        return DeviceBuf(scratch(), 16 // np.dtype(dtype).itemsize, np.dtype(dtype).itemsize)
    itemsize = view.dtype.itemsize
    nbytes = max(extent(view) * itemsize, np.dtype(dtype).itemsize)
    count = nbytes // np.dtype(dtype).itemsize
    if view.host:
        from .intrinsics.sim import _owner, memory_bytes

        x = view.obj if isinstance(view.obj, np.ndarray) else np.asarray(view.obj)
        owner = _owner(x)
        off = x.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return np.ndarray((count,), dtype, buffer=memory_bytes(owner), offset=off)
    return DeviceBuf(view.ptr, count, np.dtype(dtype).itemsize)


class DeviceBuf:
    """A 1-D device buffer as the cubin launch path passes it (no numba array object)."""

    __slots__ = ("ptr", "count", "itemsize")

    def __init__(self, ptr, count, itemsize):
        self.ptr, self.count, self.itemsize = ptr, count, itemsize

    def params(self):
        return launch.array_params(self.ptr, (self.count,), (self.itemsize,), self.itemsize)

    def offset(self, nbytes):
        return DeviceBuf(self.ptr + nbytes, max(self.count - nbytes // self.itemsize, 1),
                         self.itemsize)


_SCRATCH = {}


def scratch():
    dev = cuda.get_current_device().id
    if dev not in _SCRATCH:
        _SCRATCH[dev] = cuda.device_array(64, np.uint8)
    return _SCRATCH[dev].device_ctypes_pointer.value



def empty(like, shape, dtype, stream: int = 0):
    """An uninitialised result in the framework of ``like`` (an ArrayView). ``stream``: the raw
    handle the call launches on. A numba result (for numba and other array-interface inputs)
    is bound to it where it is not the legacy default stream (0): numba's own copies of it
    (``copy_to_host()``) then run on that stream after the call's kernels, and its
    ``__cuda_array_interface__`` names it to the next consumer. CuPy and torch results are
    ordered by their frameworks' current streams and take no handle."""
    if like.host:
        return np.empty(shape, dtype)
    if like.framework == "cupy":
        import cupy

        with cupy.cuda.Device(like.device):
            return cupy.empty(shape, dtype)
    if like.framework == "torch":
        import torch

        return torch.empty(shape, dtype=arrays.torch_dtype_of(dtype), device=like.obj.device)
    bound = cuda.external_stream(stream) if stream else 0
    if np.dtype(dtype) == arrays.BF16:  # numba has no bf16: its bits, declared bf16
        return DeviceView(cuda.device_array(shape, np.uint16, stream=bound),
                          declared=arrays.BF16)
    return cuda.device_array(shape, dtype, stream=bound)



_built = {}


def launch_jit(kernel, sig, grid, block, smem, stream, args, key_parts, arch):
    """Simulator: numba's launch. GPU: the kernel's cached cubin through cuLaunchKernel.

    ``key_parts`` name the kernel's configuration for the disk cache; a last part that is not
    None (a user epilogue) keeps the build in memory only. Returns the launch's record
    ``(fn, grid, block, smem, packed)`` for replaying it, None in the simulator.

    A kernel with ``nbk_cluster`` (a cluster shape) is built for that shape and launched in
    clusters of it (``fn`` then carries the shape: :func:`launch.launch_packed`); the grid must
    be a multiple of it, and numba's simulator cannot run it. A kernel with ``nbk_by_value``
    (``{argument position: bytes}``) takes those arguments as host NumPy arrays whose bytes
    are passed in the launch's parameters (:func:`launch.by_value_ptx`); the simulator gets
    them as arrays.
    """
    cluster = getattr(kernel, "nbk_cluster", None)
    name = kernel.py_func.__qualname__.split(".")[0]
    if cluster is not None:
        if simulated():
            raise NbkernelsError(
                f"{name}: a kernel launched in clusters of {tuple(cluster)} blocks cannot run in "
                "numba's simulator, which runs the blocks of a grid one at a time (the blocks of "
                "a cluster must run together); run it on a GPU")
        g = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        if any(gi % ci for gi, ci in zip(g, cluster)):
            raise NbkernelsError(f"{name}: the grid {g} must be a multiple of the cluster shape "
                                 f"{tuple(cluster)} in every dimension")
    if simulated():
        kernel[grid, block, 0, smem](*args)
        return None
    key, fn = _function(kernel, sig, arch, key_parts, smem)
    pool = getattr(kernel, "nbk_reg_pool", None)
    if pool is not None and key not in _pool_checked:
        _check_reg_pool(fn, key, pool, block)
    if cluster is not None:
        max_active_clusters(kernel, sig, block, smem, key_parts, arch)  # refuses what cannot fit
        fn = tuple(fn[:2]) + (tuple(cluster),)
    values, ctys = [], []
    by_value = getattr(kernel, "nbk_by_value", None) or {}
    for i, (t, a) in enumerate(zip(sig, args)):
        if i in by_value:  # its bytes travel in the launch (launch.by_value_ptx)
            v, c = launch.by_value_params(a, by_value[i])
        elif isinstance(t, types.Array):
            v, c = a.params() if isinstance(a, DeviceBuf) else view_params(a)
        elif isinstance(t, types.BaseTuple):
            v, c = [], []
            for tt, aa in zip(t, a):
                vv, cc = view_params(aa) if isinstance(tt, types.Array) else ([aa], [ctype(tt)])
                v += vv
                c += cc
        else:
            v, c = [a], [ctype(t)]
        values += v
        ctys += c
    block = tuple(block) if isinstance(block, tuple) else (block,)
    block += (1,) * (3 - len(block))
    packed = launch.PackedArgs(values, ctys)
    launch.launch_packed(fn, grid, block, smem, stream, packed)
    return fn, tuple(grid), block, smem, packed


def persisted(key_parts) -> bool:
    """Whether the build named by ``key_parts`` goes to the disk cache: every one but those
    whose last part names a user epilogue (the user's code, which the cache key's hash of
    nbkernels' sources does not cover: those stay in memory). The key parts of a persisted
    build must name every argument its kernel was built from."""
    return key_parts[-1] is None


def _function(kernel, sig, arch, key_parts, smem):
    """(cache key, loaded function) of a kernel: built or read from disk once per process."""
    persist = persisted(key_parts)
    # keyed by the kernel's id, and the entry holds the kernel: while the entry stands, no
    # other kernel can be given that id (a kernel built per call and freed, e.g. one per
    # cluster shape, once handed its successor the build of the shape before)
    mem_key = (id(kernel), sig, str(arch))
    entry = _built.get(mem_key)
    if entry is None or entry[3] is not kernel:
        cluster = getattr(kernel, "nbk_cluster", None)
        key = launch.cache_key(kernel.py_func.__qualname__.split(".")[0], key_parts + (str(sig),),
                               arch, cluster)
        if not persist:
            key += f"-mem{id(kernel)}"
        bounds = getattr(kernel, "nbk_launch_bounds", None)
        cubin, name = launch.build(kernel.py_func, sig, arch, key, bounds, cluster) if persist \
            else build_unpersisted(kernel, sig, arch, key, bounds, cluster)
        entry = _built[mem_key] = (key, cubin, name, kernel)
    key, cubin, name, _ = entry
    return key, launch.function(key, cubin, name, smem)


def ensure_built(kernel, sig, arch, key_parts, smem):
    """Build (or load) what :func:`launch_jit` would launch, without launching: a caller that
    launches under a lock compiles outside it."""
    if not simulated():
        _function(kernel, sig, arch, key_parts, smem)


_clusters_fit: dict = {}  # (key, device, block, smem) -> clusters that can be resident at once


def max_active_clusters(kernel, sig, block, smem, key_parts, arch) -> int:
    """How many clusters of the kernel's ``nbk_cluster`` shape the GPU holds at once with this
    block size and shared memory (``cuOccupancyMaxActiveClusters``): the grid of a persistent
    cluster kernel. Raises when not even one fits (the launch would fail)."""
    from cuda.bindings import driver as drv

    cluster = tuple(kernel.nbk_cluster)
    block = tuple(block) if isinstance(block, tuple) else (block,)
    block += (1,) * (3 - len(block))
    key, fn = _function(kernel, sig, arch, key_parts, smem)
    memo = (key, cuda.get_current_device().id, block, smem)
    n = _clusters_fit.get(memo)
    if n is None:
        per = cluster[0] * cluster[1] * cluster[2]
        config = launch.cluster_config((per, 1, 1), block, smem, cluster)
        n = int(launch._check(drv.cuOccupancyMaxActiveClusters(fn[1], config),
                              f"{key}: cuOccupancyMaxActiveClusters"))
        if n < 1:
            raise NbkernelsError(
                f"{key}: a cluster of {cluster} blocks of {block[0] * block[1] * block[2]} "
                f"threads and {smem} B shared memory each cannot be resident on this GPU "
                "(cuOccupancyMaxActiveClusters: 0); expected at least one cluster to fit, "
                "got none: use a smaller cluster or less shared memory")
        _clusters_fit[memo] = n
    return n


_pool_checked: set = set()


def _check_reg_pool(fn, key, pool, block):
    """A kernel whose warpgroups trade registers with setmaxnreg must own at least what they
    ask for in all (registers per thread x threads), or the request never returns: refuse the
    launch with the numbers instead of hanging the GPU."""
    from cuda.bindings import driver as drv

    regs = launch._check(drv.cuFuncGetAttribute(
        drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn[1]), f"{key}: registers")
    threads = 1
    for b in (block if isinstance(block, tuple) else (block,)):
        threads *= b
    if regs * threads < pool:
        raise NbkernelsError(
            f"{key}: setmaxnreg requests {pool} registers in all, expected at most the "
            f"{regs} x {threads} the block owns; got a cubin with {regs} registers per thread "
            "(an assembler that does not give setmaxnreg kernels their launch bound's cap)")
    _pool_checked.add(key)


def build_unpersisted(kernel, sig, arch, key, bounds, cluster=None):
    import tempfile

    old = os.environ.get("NBKERNELS_CACHE_DIR")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NBKERNELS_CACHE_DIR"] = tmp
        try:
            return launch.build(kernel.py_func, sig, arch, key, bounds, cluster)
        finally:
            if old is None:
                os.environ.pop("NBKERNELS_CACHE_DIR", None)
            else:
                os.environ["NBKERNELS_CACHE_DIR"] = old


def ctype(t):
    return {types.int64: launch.I64, types.int32: launch.I32, types.float32: launch.F32,
            types.float64: launch.F64}[t]


def view_params(a):
    """numba ABI fields of an ArrayView passed as a typed array argument."""
    return launch.array_params(a.ptr, a.shape, [s * a.dtype.itemsize for s in a.strides],
                               a.dtype.itemsize)


class DeviceView:
    """A numba device array re-described for ``arrays.as_view``: with explicit ``shape`` and
    byte ``strides`` (a view of a padded K-major copy), and/or a ``declared`` dtype (bf16 held
    as uint16 bits, which a typestr cannot say)."""

    def __init__(self, devarray, shape=None, strides=None, declared=None):
        self._keep = devarray
        cai = dict(devarray.__cuda_array_interface__)
        if shape is not None:
            cai.update(shape=tuple(shape), strides=tuple(strides))
        self.shape = tuple(cai["shape"])
        self.__cuda_array_interface__ = cai
        self.nbk_dtype = declared  # read by arrays.as_view; None: trust the typestr

    def copy_to_host(self):
        host = self._keep.copy_to_host()
        strides = self.__cuda_array_interface__.get("strides")
        if self.shape == host.shape and strides in (None, host.strides):
            return host
        return np.lib.stride_tricks.as_strided(host, self.shape, strides).copy()
