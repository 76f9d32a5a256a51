"""Probes of the Hopper instructions (wgmma, TMA, mbarrier, stmatrix, elect, setmaxnreg).

Same contract as :mod:`.probes` (inputs, poisoned outputs, independent NumPy reference),
with two additions: a probe may need tensor maps of its device arrays (made at launch, passed
as the last argument), and on a GPU it is compiled for ``sm_90a`` explicitly and launched
through :mod:`nbkernels.launch`, because numba-cuda's dispatcher types kernels for the
device's plain ``sm_90``.

The wgmma probes are in :mod:`.wgmma_probes`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import cuda, types

from ..arch import Arch
from . import hopper, mbarrier, memory, probes, tma
from .probes import BF16, Probe, _register

SM90A = Arch(9, 0, "a")


@dataclass
class HopperProbe(Probe):
    launch_bounds: tuple = None
    make_maps: Callable = None  # {name: device array} -> [TensorMap]; passed as last argument

    @property
    def extra_types(self):
        return (types.uint8[:, ::1],) if self.make_maps else ()

    def run(self, inputs: dict) -> dict:
        """Launch on the GPU (compiled for sm_90a) or in the simulator when it is enabled."""
        from numba.cuda import config

        from .. import tensormap

        outs = self.outputs(inputs)
        for name, a in outs.items():
            if name not in self.keep_initial:
                probes._poison(a)
        d_in = {k: cuda.to_device(np.ascontiguousarray(v)) for k, v in inputs.items()}
        d_out = {k: cuda.to_device(v) for k, v in outs.items()}
        args = [*d_in.values(), *d_out.values()]
        if self.make_maps:
            args.append(tensormap.to_device(self.make_maps({**d_in, **d_out})))
        if config.ENABLE_CUDASIM:
            self.kernel[1, self.threads, 0, self.shared_bytes](*args)
        else:
            _launch_sm90a(self, args)
        cuda.synchronize()
        return {k: v.copy_to_host() for k, v in d_out.items()}


def _launch_sm90a(probe, args):
    import numba

    from .. import launch

    sig = tuple(numba.typeof(a) for a in args)
    key = launch.cache_key(f"probe-{probe.name}", (str(sig), probe.launch_bounds), SM90A)
    cubin, entry = launch.build(probe.kernel.py_func, sig, SM90A, key, probe.launch_bounds)
    fn = launch.function(key, cubin, entry, probe.shared_bytes)
    values, ctys = [], []
    for a in args:
        v, c = launch.array_params(a.device_ctypes_pointer.value, a.shape, a.strides,
                                   a.dtype.itemsize)
        values += v
        ctys += c
    launch.launch_packed(fn, (1, 1, 1), (probe.threads, 1, 1), probe.shared_bytes, 0,
                         launch.PackedArgs(values, ctys))




# ---------------------------------------------------------------------------------------------
# TMA and mbarrier: 2-D and 3-D box loads (swizzled, out of bounds), two phases, a store
# ---------------------------------------------------------------------------------------------
_SRC, _SRC3 = (100, 96), (4, 20, 24)  # odd extents: boxes hang over every edge somewhere
_T0 = (16, 20)  # (x, y) of the 64x64 bf16 box, 128-byte swizzle
_T1 = (80, 90)  # the 16x32 box without swizzle: 6 rows and 16 columns outside
_T3 = (20, -3, 3)  # the 2x8x8 f32 box, 32-byte swizzle: outside along every axis
_T2 = (32, 36)  # the second phase's box
_ST = (64, 50)  # where the first box is stored back into dst (50 rows, 32 columns inside)
_ST3 = (8, 14, 3)  # where the 3-D box is stored into dst3 (1 plane, 6 rows inside)
_BYTES0, _BYTES1, _BYTES3 = 64 * 64 * 2, 16 * 32 * 2, 2 * 8 * 8 * 4


@cuda.jit
def _tma_kernel(src, src3, raw, oob, box3, raw2, flags, dst, dst3, tmaps):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array(2, np.uint64)
    t = cuda.threadIdx.x
    pad = (1024 - memory.smem_addr(sh, 0) % 1024) % 1024  # 128-byte swizzle: 1024-aligned
    base = memory.smem_addr(sh, 0) + pad
    b0 = memory.smem_addr(bars, 0)
    b1 = memory.smem_addr(bars, 1)
    if t == 0:
        for m in range(5):
            tma.fence_proxy_tensormap_acquire(tmaps, (m, 0))
        tma.prefetch_tensormap(tmaps, (0, 0))
        mbarrier.mbarrier_init(b0, 1)
        mbarrier.mbarrier_init(b1, 128)
        hopper.fence_proxy_async()
    cuda.syncthreads()
    if t == 0:
        flags[0] = mbarrier.mbarrier_try_wait_parity(b0, 0)  # no arrival yet: 0
        mbarrier.mbarrier_arrive_expect_tx(b0, _BYTES0 + _BYTES1 + _BYTES3)
        tma.tma_load_2d(base, tmaps, (0, 0), _T0[0], _T0[1], b0)
        tma.tma_load_2d(base + 8192, tmaps, (1, 0), _T1[0], _T1[1], b0)
        tma.tma_load_3d(base + 9216, tmaps, (2, 0), _T3[0], _T3[1], _T3[2], b0)
    while not mbarrier.mbarrier_try_wait_parity(b0, 0):
        pass
    for i in range(t, _BYTES0, 128):
        raw[i] = sh[pad + i]
    for i in range(t, _BYTES1, 128):
        oob[i] = sh[pad + 8192 + i]
    for i in range(t, _BYTES3, 128):
        box3[i] = sh[pad + 9216 + i]
    if t == 0:
        flags[1] = mbarrier.mbarrier_try_wait_parity(b0, 0)  # phase 0 done: 1
        flags[2] = mbarrier.mbarrier_try_wait_parity(b0, 1)  # phase 1 not yet: 0
    mbarrier.mbarrier_arrive(b1)  # 128 arrivals complete b1's phase 0
    while not mbarrier.mbarrier_try_wait_parity(b1, 0):
        pass
    if t == 0:  # phase 1 of b0: bytes announced and the arrival made separately
        mbarrier.mbarrier_expect_tx(b0, _BYTES0)
        tma.tma_load_2d(base + 10240, tmaps, (0, 0), _T2[0], _T2[1], b0)
        mbarrier.mbarrier_arrive(b0)
    while not mbarrier.mbarrier_try_wait_parity(b0, 1):
        pass
    for i in range(t, _BYTES0, 128):
        raw2[i] = sh[pad + 10240 + i]
    if t == 0:
        flags[3] = mbarrier.mbarrier_try_wait_parity(b1, 1)  # b1's phase 1 has no arrival: 0
        tma.tma_store_2d(tmaps, (3, 0), _ST[0], _ST[1], base)
        tma.tma_store_3d(tmaps, (4, 0), _ST3[0], _ST3[1], _ST3[2], base + 9216)
        tma.bulk_commit_group()
        tma.bulk_wait_group_read(0)
        tma.bulk_wait_group(0)


def _tma_inputs(rng, exact):
    src = rng.integers(0, 2**16, _SRC).astype(np.uint16)
    src3 = rng.standard_normal(_SRC3).astype(np.float32)
    return {"src": src, "src3": src3}


def _tma_outputs(inp):
    dst = (np.arange(np.prod(_SRC)) % 65521).astype(np.uint16).reshape(_SRC)
    return {"raw": np.empty(_BYTES0, np.uint8), "oob": np.empty(_BYTES1, np.uint8),
            "box3": np.empty(_BYTES3, np.uint8), "raw2": np.empty(_BYTES0, np.uint8),
            "flags": np.empty(4, np.uint32), "dst": dst,
            "dst3": np.linspace(-1, 1, np.prod(_SRC3), dtype=np.float32).reshape(_SRC3)}


def _boxed(a, start, box):
    """The box of ``a`` at ``start`` (NumPy order), zero outside ``a``."""
    out = np.zeros(box, a.dtype)
    src = tuple(slice(max(s, 0), min(s + b, n)) for s, b, n in zip(start, box, a.shape))
    dst = tuple(slice(x.start - s, x.stop - s) for x, s in zip(src, start))
    out[dst] = a[src]
    return out


def _swizzled(tile_bytes, row_bytes):
    """A box stored from a 1024-aligned address: chunk c of row r moves to c ^ (row bits)."""
    rows = tile_bytes.reshape(-1, row_bytes // 16, 16)
    out = np.empty_like(rows)
    addr_rows = np.arange(rows.shape[0]) * row_bytes
    for r in range(rows.shape[0]):
        for c in range(rows.shape[1]):
            a = addr_rows[r] + 16 * c
            out.reshape(-1, 16)[(a ^ (((a >> 7) & (row_bytes // 16 - 1)) << 4)) // 16] = rows[r, c]
    return out.reshape(-1)


def _tma_reference(inp):
    src, src3 = inp["src"], inp["src3"]
    dst = _tma_outputs(inp)["dst"]
    dst[_ST[1]:, _ST[0]:] = src[_T0[1]:_T0[1] + _SRC[0] - _ST[1], _T0[0]:_T0[0] + _SRC[1] - _ST[0]]
    tile0 = _boxed(src, (_T0[1], _T0[0]), (64, 64)).view(np.uint8).reshape(-1)
    tile2 = _boxed(src, (_T2[1], _T2[0]), (64, 64)).view(np.uint8).reshape(-1)
    logical3 = _boxed(src3, (_T3[2], _T3[1], _T3[0]), (2, 8, 8))
    box3 = logical3.view(np.uint8).reshape(-1)
    dst3 = _tma_outputs(inp)["dst3"]
    x, y, z = _ST3
    dst3[z:z + 2, y:y + 8, x:x + 8] = logical3[:_SRC3[0] - z, :_SRC3[1] - y, :_SRC3[2] - x]
    return {"raw": _swizzled(tile0, 128), "raw2": _swizzled(tile2, 128),
            "oob": _boxed(src, (_T1[1], _T1[0]), (16, 32)).view(np.uint8).reshape(-1),
            "box3": _swizzled(box3, 32), "flags": np.array([0, 1, 0, 0], np.uint32), "dst": dst,
            "dst3": dst3}


def _tma_maps(d):
    from .. import tensormap

    return [tensormap.tensor_map(d["src"], (64, 64), dtype=BF16, swizzle=128),
            tensormap.tensor_map(d["src"], (16, 32), dtype=BF16, swizzle=0),
            tensormap.tensor_map(d["src3"], (2, 8, 8), swizzle=32),
            tensormap.tensor_map(d["dst"], (64, 64), dtype=BF16, swizzle=128),
            tensormap.tensor_map(d["dst3"], (2, 8, 8), swizzle=32)]


_register(HopperProbe(
    "tma_mbarrier",
    ("tma_load_2d", "tma_load_3d", "tma_store_2d", "tma_store_3d", "bulk_commit_group", "bulk_wait_group_read",
     "bulk_wait_group", "fence_proxy_tensormap_acquire", "prefetch_tensormap", "mbarrier_init",
     "mbarrier_arrive", "mbarrier_arrive_expect_tx", "mbarrier_expect_tx",
     "mbarrier_try_wait_parity", "fence_proxy_async", "smem_addr"),
    _tma_kernel, _tma_inputs, _tma_outputs, _tma_reference, threads=128,
    shared_bytes=1024 + 10240 + _BYTES0, keep_initial=("dst", "dst3"), make_maps=_tma_maps))


# ---------------------------------------------------------------------------------------------
# 1-D bulk copies: two loads (one from an offset source) on one mbarrier, then a store of bytes
# the threads rewrote in shared memory (generic-proxy writes made visible to the async proxy)
# ---------------------------------------------------------------------------------------------
_BULK = (2048, 2560, 1024, 16)  # first load's bytes, second load's source offset and bytes,
# the store's destination offset; the store writes the first 1024 bytes back, each XOR 0x5A


@cuda.jit
def _bulk_kernel(src, raw, flags, dst):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array(1, np.uint64)
    t = cuda.threadIdx.x
    pad = (128 - memory.smem_addr(sh, 0) % 128) % 128
    base = memory.smem_addr(sh, 0) + pad
    b0 = memory.smem_addr(bars, 0)
    if t == 0:
        mbarrier.mbarrier_init(b0, 1)
        hopper.fence_proxy_async()
    cuda.syncthreads()
    if t == 0:
        mbarrier.mbarrier_arrive_expect_tx(b0, _BULK[0] + _BULK[2])
        tma.bulk_load(base, memory.gmem_addr(src, 0), _BULK[0], b0)
        tma.bulk_load(base + _BULK[0], memory.gmem_addr(src, _BULK[1]), _BULK[2], b0)
    while not mbarrier.mbarrier_try_wait_parity(b0, 0):
        pass
    for i in range(t, _BULK[0] + _BULK[2], 128):
        raw[i] = sh[pad + i]
    if t == 0:
        flags[0] = mbarrier.mbarrier_try_wait_parity(b0, 1)  # phase 1 not begun: 0
    cuda.syncthreads()
    for i in range(t, _BULK[2], 128):
        sh[pad + i] = sh[pad + i] ^ np.uint8(0x5A)
    hopper.fence_proxy_async()  # each writer's bytes visible to the bulk store
    cuda.syncthreads()
    if t == 0:
        tma.bulk_store(memory.gmem_addr(dst, _BULK[3]), base, _BULK[2])
        tma.bulk_commit_group()
        tma.bulk_wait_group(0)


def _bulk_outputs(inp):
    return {"raw": np.empty(_BULK[0] + _BULK[2], np.uint8), "flags": np.empty(1, np.uint32),
            "dst": (np.arange(4096) % 251).astype(np.uint8)}


def _bulk_reference(inp):
    src = inp["src"]
    dst = _bulk_outputs(inp)["dst"]
    dst[_BULK[3]:_BULK[3] + _BULK[2]] = src[:_BULK[2]] ^ 0x5A
    return {"raw": np.concatenate([src[:_BULK[0]], src[_BULK[1]:_BULK[1] + _BULK[2]]]),
            "flags": np.zeros(1, np.uint32), "dst": dst}


_register(HopperProbe(
    "bulk_copy",
    ("bulk_load", "bulk_store", "bulk_commit_group", "bulk_wait_group", "mbarrier_init",
     "mbarrier_arrive_expect_tx", "mbarrier_try_wait_parity", "fence_proxy_async", "smem_addr",
     "gmem_addr"),
    _bulk_kernel, lambda rng, exact: {"src": rng.integers(0, 256, 4096).astype(np.uint8)},
    _bulk_outputs, _bulk_reference, threads=128, shared_bytes=128 + _BULK[0] + _BULK[2],
    keep_initial=("dst",)))


# ---------------------------------------------------------------------------------------------
# Cluster instructions in a cluster of one CTA (a launch without a cluster shape, and what
# numba's simulator models): rank 0 of 1, multicast to ctaMask 0b1, mapa to rank 0, a remote
# arrival on the block's own barrier, a store through distributed shared memory, split cluster
# barriers. The two-CTA case runs in the cluster GEMM (tests/test_gemm_sm90a_gpu.py).
# ---------------------------------------------------------------------------------------------
@cuda.jit
def _cluster_kernel(src, src3, raw, box3, flags, dsm, tmaps):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array(2, np.uint64)
    slots = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    pad = (1024 - memory.smem_addr(sh, 0) % 1024) % 1024
    base = memory.smem_addr(sh, 0) + pad
    b0 = memory.smem_addr(bars, 0)
    b1 = memory.smem_addr(bars, 1)
    if t == 0:
        tma.fence_proxy_tensormap_acquire(tmaps, (0, 0))
        tma.fence_proxy_tensormap_acquire(tmaps, (1, 0))
        mbarrier.mbarrier_init(b0, 1)
        mbarrier.mbarrier_init(b1, 128)
        hopper.fence_proxy_async()
        hopper.fence_mbarrier_init()
    hopper.barrier_cluster_arrive()
    hopper.barrier_cluster_wait()
    rank = hopper.cluster_ctarank()
    if t == 0:
        flags[0] = rank
        flags[1] = hopper.cluster_nctarank()
        mbarrier.mbarrier_arrive_expect_tx(b0, _BYTES0 + _BYTES3)
        tma.tma_load_2d_multicast(base, tmaps, (0, 0), _T0[0], _T0[1], b0, 1 << rank)
        tma.tma_load_3d_multicast(base + 8192, tmaps, (1, 0), _T3[0], _T3[1], _T3[2], b0,
                                  1 << rank)
    while not mbarrier.mbarrier_try_wait_parity(b0, 0):
        pass
    for i in range(t, _BYTES0, 128):
        raw[i] = sh[pad + i]
    for i in range(t, _BYTES3, 128):
        box3[i] = sh[pad + 8192 + i]
    mbarrier.mbarrier_arrive_cluster(hopper.mapa_shared_cluster(b1, rank))  # 128 arrivals
    while not mbarrier.mbarrier_try_wait_parity(b1, 0):
        pass
    if t == 0:
        flags[2] = mbarrier.mbarrier_try_wait_parity(b1, 0)
    # distributed shared memory: each thread stores into the slot of its own index in the CTA
    # of its rank, and after a cluster barrier reads the slot its neighbour stored
    hopper.st_shared_cluster_f32(hopper.mapa_shared_cluster(memory.smem_addr(slots, t), rank),
                                 np.float32(t) * np.float32(0.5) + np.float32(rank))
    hopper.barrier_cluster_arrive()
    hopper.barrier_cluster_wait()
    dsm[t] = slots[(t + 1) % 128]
    hopper.barrier_cluster_arrive_relaxed()
    hopper.barrier_cluster_wait()


def _cluster_reference(inp):
    ref = _tma_reference(inp)
    return {"raw": ref["raw"], "box3": ref["box3"], "flags": np.array([0, 1, 1], np.uint32),
            "dsm": ((np.arange(128) + 1) % 128 * 0.5).astype(np.float32)}


def _cluster_maps(d):
    from .. import tensormap

    return [tensormap.tensor_map(d["src"], (64, 64), dtype=BF16, swizzle=128),
            tensormap.tensor_map(d["src3"], (2, 8, 8), swizzle=32)]


_register(HopperProbe(
    "cluster_of_one",
    ("tma_load_2d_multicast", "tma_load_3d_multicast", "cluster_ctarank", "cluster_nctarank",
     "mapa_shared_cluster", "st_shared_cluster_f32", "mbarrier_arrive_cluster",
     "barrier_cluster_arrive",
     "barrier_cluster_arrive_relaxed", "barrier_cluster_wait", "fence_mbarrier_init",
     "fence_proxy_tensormap_acquire", "mbarrier_init", "mbarrier_arrive_expect_tx",
     "mbarrier_try_wait_parity", "fence_proxy_async", "smem_addr"),
    _cluster_kernel, _tma_inputs,
    lambda inp: {"raw": np.empty(_BYTES0, np.uint8), "box3": np.empty(_BYTES3, np.uint8),
                 "flags": np.empty(3, np.uint32), "dsm": np.empty(128, np.float32)},
    _cluster_reference, threads=128, shared_bytes=1024 + 8192 + _BYTES3,
    make_maps=_cluster_maps))


# ---------------------------------------------------------------------------------------------
# stmatrix, elect.sync, setmaxnreg: 3 warpgroups, one producer-style (dec), two consumer-style
# ---------------------------------------------------------------------------------------------
@cuda.jit
def _misc_kernel(regs, elect_all, elect_odd, st):
    sh = cuda.shared.array(0, np.uint16)
    t = cuda.threadIdx.x
    lane = t % 32
    if t // 128 == 0:
        hopper.setmaxnreg_dec(40)
    else:
        hopper.setmaxnreg_inc(232)
    elect_all[t] = hopper.elect_sync(0xFFFFFFFF)
    e = np.uint32(7)
    if lane % 2 == 1:
        e = hopper.elect_sync(0xAAAAAAAA)
    elect_odd[t] = e
    for i in range(t, 1536, 384):
        sh[i] = 0
    cuda.syncthreads()
    if t < 32:  # 6 regions of 512 bytes; lane l names row l % 8 of matrix l // 8
        r = (regs[lane, 0], regs[lane, 1], regs[lane, 2], regs[lane, 3])
        a = memory.smem_addr(sh, 0) + lane * 16
        hopper.stmatrix_x1(a, r[0])
        hopper.stmatrix_x2(a + 512, (r[0], r[1]))
        hopper.stmatrix_x4(a + 1024, r)
        hopper.stmatrix_x1_trans(a + 1536, r[0])
        hopper.stmatrix_x2_trans(a + 2048, (r[0], r[1]))
        hopper.stmatrix_x4_trans(a + 2560, r)
    cuda.syncthreads()
    for i in range(t, 1536, 384):
        st[i] = sh[i]


def _misc_reference(inp):
    regs = inp["regs"]
    lane = np.arange(384) % 32
    halves = np.stack([regs & 0xFFFF, regs >> 16], axis=-1).astype(np.uint16)  # (32, 4, 2)
    st = np.zeros((6, 256), np.uint16)
    for k, (nmat, trans) in enumerate([(1, 0), (2, 0), (4, 0), (1, 1), (2, 1), (4, 1)]):
        for j in range(nmat):
            m = np.empty((8, 8), np.uint16)
            for r in range(8):
                for col in range(8):
                    if trans:  # stored row r is the fragment's column r
                        m[r, col] = halves[4 * col + r // 2, j, r % 2]
                    else:
                        m[r, col] = halves[4 * r + col // 2, j, col % 2]
            st[k, 64 * j:64 * (j + 1)] = m.reshape(-1)
    return {"elect_all": (lane == 0).astype(np.uint32),
            "elect_odd": np.where(lane % 2 == 0, 7, lane == 1).astype(np.uint32),
            "st": st.reshape(-1)}


_register(HopperProbe(
    "hopper_misc",
    ("elect_sync", "setmaxnreg_dec", "setmaxnreg_inc", "stmatrix_x1", "stmatrix_x2",
     "stmatrix_x4", "stmatrix_x1_trans", "stmatrix_x2_trans", "stmatrix_x4_trans", "smem_addr"),
    _misc_kernel,
    lambda rng, exact: {"regs": rng.integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)},
    lambda inp: {"elect_all": np.empty(384, np.uint32), "elect_odd": np.empty(384, np.uint32),
                 "st": np.empty(1536, np.uint16)},
    _misc_reference, threads=384, shared_bytes=3072,
    launch_bounds=(384, 1)))  # 168 registers at entry: dec 40 frees what two inc 232 take


from . import wgmma_probes  # noqa: E402,F401 - registers the wgmma probes (needs HopperProbe)
