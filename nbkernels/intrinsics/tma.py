"""TMA: ``cp.async.bulk.tensor`` box copies between global and shared memory (sm_90).

``tma_load_2d(dst, tmaps, index, x, y, mbar)`` copies the box at coordinates ``(x, y)``
(innermost first: ``x`` is the column) of the tensor described by the tensor map
``tmaps[index]`` into shared memory at ``dst`` (128-byte aligned; aligned to the swizzle
atom, 8 x the swizzle width, when the map swizzles), and signals the mbarrier at ``mbar``
with the box's bytes (announce them with ``mbarrier_arrive_expect_tx``). Elements outside
the tensor read as zero. ``tma_store_2d(tmaps, index, x, y, src)`` writes a box back,
skipping elements outside the tensor; ``bulk_commit_group`` / ``bulk_wait_group_read(n)``
tell when the source shared memory may be reused. ``_3d`` variants take ``z`` too.
``bulk_load(dst, src, size, mbar)`` and ``bulk_store(dst, src, size)`` move ``size`` contiguous
bytes (16-byte aligned, a multiple of 16) without a tensor map.

``tma_load_2d_multicast(dst, tmaps, index, x, y, mbar, mask)`` (and ``_3d``) delivers the box to
every CTA of the cluster whose rank has its bit set in ``mask`` (ctaMask), at the same shared
offset ``dst`` in each, and completes its bytes on the mbarrier at the same offset ``mbar`` in
each: every receiving CTA must announce the bytes on its own barrier. sm_90 has it; the PTX ISA
says it is optimised for sm_90a only. numba's simulator runs one CTA per cluster (rank 0), so
it simulates ``mask == 1`` only.

Tensor maps come from :mod:`nbkernels.tensormap` and live in global memory (see there for
why); ``fence_proxy_tensormap_acquire`` must precede the first use in each block.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from ..errors import SimulatorError
from . import descriptors, mbarrier, sim
from .factory import build
from .spec import Const, Element, InstructionSpec, Operand

SM90 = Arch(9, 0)
_TMAP = Element("tmap", doc="a uint8[k, 128] device array of tensor maps and the map's index")


# --- simulator --------------------------------------------------------------------------------
def _map_of(arr, index, what):
    from .. import tensormap

    host = sim.host_array(arr)
    owner = sim._owner(host)
    off = sim.element_host_ptr(host, index) - owner.__array_interface__["data"][0]
    raw = sim.memory_bytes(owner)[off:off + tensormap.MAP_BYTES]
    tm = tensormap.lookup(raw.tobytes()) if raw.size == tensormap.MAP_BYTES else None
    if tm is None:
        raise SimulatorError(f"{what}: the 128 bytes at tmap[{index}] are not a tensor map "
                             "encoded by nbkernels.tensormap in this process")
    if tm.oob_nan:
        raise SimulatorError(f"{what}: NaN fill of out-of-bounds elements is not simulated")
    if any(e != 1 for e in tm.element_strides[:-1]):  # TMA ignores the innermost one
        raise SimulatorError(f"{what}: element strides {tm.element_strides} are not simulated")
    return tm


def _box(tm, coords, what):
    """(global byte offsets, in-bounds mask, global byte view) of the box at ``coords``."""
    if len(coords) != len(tm.shape):
        raise SimulatorError(f"{what}: a rank-{len(tm.shape)} tensor map needs "
                             f"{len(tm.shape)} coordinates, got {len(coords)}")
    start = np.array([int(c) for c in coords[::-1]], np.int64)  # NumPy order
    idx = np.indices(tm.box, dtype=np.int64).reshape(len(tm.box), -1) + start[:, None]
    shape = np.array(tm.shape, np.int64)[:, None]
    inside = ((idx >= 0) & (idx < shape)).all(axis=0)
    offs = (np.where(inside, idx, 0) * np.array(tm.strides, np.int64)[:, None]).sum(axis=0)
    host = sim.host_array(tm.array)
    owner = sim._owner(host)
    base = host.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return base + offs, inside, sim.memory_bytes(owner)


def _smem_box(tm, addr, what):
    """(shared byte view of the box, permutation: box byte -> view index) at ``addr``."""
    nbytes = tm.box_bytes
    span = tm.swizzle
    if addr % 128:
        raise SimulatorError(f"{what}: shared address {addr:#x} is not 128-byte aligned")
    if span:
        if tm.box[-1] * tm.dtype.itemsize != span:
            raise SimulatorError(f"{what}: the simulator models swizzled boxes whose rows are "
                                 f"exactly {span} bytes, got {tm.box[-1] * tm.dtype.itemsize}")
        if addr % (8 * span):
            raise SimulatorError(f"{what}: shared address {addr:#x} is not aligned to the "
                                 f"{8 * span}-byte swizzle atom")
    window = sim.launch_state().shared.bytes_at(int(addr), nbytes, what)
    o = np.arange(nbytes, dtype=np.int64)
    return window, descriptors.swizzle_address(o, span)


def _load(what):
    def simulate(dst, tmap, index, *rest):
        *coords, mbar = rest
        tm = _map_of(tmap, index, what)
        offs, inside, gmem = _box(tm, coords, what)
        es = tm.dtype.itemsize
        data = np.zeros((offs.size, es), np.uint8)
        data[inside] = gmem[offs[inside][:, None] + np.arange(es)]
        window, perm = _smem_box(tm, int(dst), what)
        window[perm] = data.reshape(-1)
        mbarrier.complete_tx(int(mbar), tm.box_bytes, what)

    return simulate


def _load_multicast(what):
    plain = _load(what)

    def simulate(dst, tmap, index, *rest):
        *coords, mbar, mask = rest
        if int(mask) != 1:
            raise SimulatorError(
                f"{what}: ctaMask {int(mask):#x} names CTAs besides rank 0; numba's simulator "
                "runs clusters of one CTA, so only ctaMask 0x1 is simulated")
        plain(dst, tmap, index, *coords, mbar)

    return simulate


def _store(what):
    def simulate(tmap, index, *rest):
        *coords, src = rest
        tm = _map_of(tmap, index, what)
        offs, inside, gmem = _box(tm, coords, what)
        es = tm.dtype.itemsize
        window, perm = _smem_box(tm, int(src), what)
        data = window[perm].reshape(-1, es)
        gmem[offs[inside][:, None] + np.arange(es)] = data[inside]

    return simulate


# --- specs ------------------------------------------------------------------------------------
_AXES = "xyz"


def _coords(rank):
    return tuple(Operand(_AXES[i], types.int32, doc=f"box start along axis {i} (innermost 0)")
                 for i in range(rank))


def _load_spec(rank):
    name = f"tma_load_{rank}d"
    regs = ", ".join(f"${a}" for a in _AXES[:rank])
    return build(InstructionSpec(
        name=name, family="tma",
        ptx=(f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes "
             f"[$dst], [$tmap, {{{regs}}}], [$mbar];"),
        inputs=(Operand("dst", types.uint32, doc="shared address of the box"), _TMAP)
        + _coords(rank) + (Operand("mbar", types.uint32, doc="mbarrier signalled with the bytes"),),
        min_arch=SM90, min_ptx=(8, 0), memory=True, sass=("UTMALDG",), simulate=_load(name),
        doc=f"Copy a {rank}-D box global -> shared (TMA), completing its bytes on an mbarrier."))


def _multicast_spec(rank):
    name = f"tma_load_{rank}d_multicast"
    regs = ", ".join(f"${a}" for a in _AXES[:rank])
    return build(InstructionSpec(
        name=name, family="tma",
        ptx=(f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
             f".multicast::cluster [$dst], [$tmap, {{{regs}}}], [$mbar], $mask;"),
        inputs=(Operand("dst", types.uint32, doc="shared offset of the box in every CTA"), _TMAP)
        + _coords(rank)
        + (Operand("mbar", types.uint32, doc="mbarrier offset signalled in every CTA"),
           Operand("mask", types.uint16, doc="ctaMask: bit r sends the box to cluster rank r")),
        min_arch=SM90, min_ptx=(8, 0), memory=True, sass=(f"UTMALDG.{rank}D.MULTICAST",),
        simulate=_load_multicast(name),
        doc=f"Copy a {rank}-D box global -> shared of every CTA in ctaMask (TMA multicast), "
            "completing its bytes on the mbarrier at the same offset in each."))


def _store_spec(rank):
    name = f"tma_store_{rank}d"
    regs = ", ".join(f"${a}" for a in _AXES[:rank])
    return build(InstructionSpec(
        name=name, family="tma",
        ptx=f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [$tmap, {{{regs}}}], [$src];",
        inputs=(_TMAP,) + _coords(rank) + (Operand("src", types.uint32, doc="shared address"),),
        min_arch=SM90, min_ptx=(8, 0), memory=True, sass=("UTMASTG",), simulate=_store(name),
        doc=f"Copy a {rank}-D box shared -> global (TMA) in the current bulk group."))


tma_load_2d, tma_load_3d = _load_spec(2), _load_spec(3)
tma_load_2d_multicast, tma_load_3d_multicast = _multicast_spec(2), _multicast_spec(3)
tma_store_2d, tma_store_3d = _store_spec(2), _store_spec(3)


def _bulk_checks(dst, src, size, what):
    n = int(size)
    if n <= 0 or n % 16:
        raise SimulatorError(f"{what}: size must be a positive multiple of 16 bytes, got {n}")
    for name, a in (("destination", dst), ("source", src)):
        if int(a) % 16:
            raise SimulatorError(f"{what}: {name} address {int(a):#x} is not 16-byte aligned")
    return n


def _bulk_load_sim(dst, src, size, mbar):
    n = _bulk_checks(dst, src, size, "bulk_load")
    sim.shared_bytes(int(dst), n, "bulk_load")[:] = sim.global_bytes(int(src), n, "bulk_load")
    mbarrier.complete_tx(int(mbar), n, "bulk_load")


def _bulk_store_sim(dst, src, size):
    n = _bulk_checks(dst, src, size, "bulk_store")
    sim.global_bytes(int(dst), n, "bulk_store")[:] = sim.shared_bytes(int(src), n, "bulk_store")


_SIZE = Operand("size", types.uint32, doc="bytes, a multiple of 16")
# 1-D bulk copies (no tensor map): contiguous bytes between global and shared memory through
# the TMA unit, e.g. a whole row of a row kernel in one instruction. Both addresses 16-byte
# aligned, the size a multiple of 16 (the PTX ISA's rules; the simulator enforces them).
bulk_load = build(InstructionSpec(
    name="bulk_load", family="tma",
    ptx=("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
         "[$dst], [$src], $size, [$mbar];"),
    inputs=(Operand("dst", types.uint32, doc="shared address, 16-byte aligned"),
            Operand("src", types.uint64, doc="global address, 16-byte aligned"), _SIZE,
            Operand("mbar", types.uint32, doc="mbarrier signalled with the bytes")),
    min_arch=SM90, min_ptx=(8, 0), memory=True, sass=("UBLKCP",), simulate=_bulk_load_sim,
    doc="Copy size contiguous bytes global -> shared (TMA, no tensor map), completing them on "
        "an mbarrier (announce them with mbarrier_arrive_expect_tx)."))
bulk_store = build(InstructionSpec(
    name="bulk_store", family="tma",
    ptx="cp.async.bulk.global.shared::cta.bulk_group [$dst], [$src], $size;",
    inputs=(Operand("dst", types.uint64, doc="global address, 16-byte aligned"),
            Operand("src", types.uint32, doc="shared address, 16-byte aligned"), _SIZE),
    min_arch=SM90, min_ptx=(8, 0), memory=True, sass=("UBLKCP",), simulate=_bulk_store_sim,
    doc="Copy size contiguous bytes shared -> global (TMA, no tensor map) in the current bulk "
        "group (bulk_commit_group, bulk_wait_group_read / bulk_wait_group)."))


def _simple(name, ptx, doc, inputs=(), sass=(), min_ptx=(8, 0), simulate=None):
    return build(InstructionSpec(
        name=name, family="tma", ptx=ptx, inputs=inputs, min_arch=SM90, min_ptx=min_ptx,
        memory=True, sass=sass, simulate=simulate or (lambda *a: None), doc=doc))


# The simulator performs stores when they are issued, so groups have nothing left to wait for.
bulk_commit_group = _simple(
    "bulk_commit_group", "cp.async.bulk.commit_group;",
    "Close this thread's pending bulk (TMA store) copies into one group.",
    sass=("UTMACMDFLUSH",))
bulk_wait_group_read = _simple(
    "bulk_wait_group_read", "cp.async.bulk.wait_group.read $n;",
    "Wait until at most n bulk groups still read their shared-memory source.",
    inputs=(Const("n", lo=0, hi=63, doc="groups that may stay pending"),), sass=("DEPBAR",))
bulk_wait_group = _simple(
    "bulk_wait_group", "cp.async.bulk.wait_group $n;",
    "Wait until at most n bulk groups are pending (their writes are complete).",
    inputs=(Const("n", lo=0, hi=63, doc="groups that may stay pending"),), sass=("DEPBAR",))
fence_proxy_tensormap_acquire = _simple(
    "fence_proxy_tensormap_acquire",
    "fence.proxy.tensormap::generic.acquire.sys [$tmap], 128;",
    "Acquire a tensor map written to global memory by the host (once per block before use).",
    inputs=(_TMAP,), min_ptx=(8, 3), sass=("UTMACCTL.IV",))
prefetch_tensormap = _simple(
    "prefetch_tensormap", "prefetch.tensormap [$tmap];",
    "Prefetch a tensor map into the TMA unit's cache.", inputs=(_TMAP,), sass=("UTMACCTL.PF",))

__all__ = ["tma_load_2d", "tma_load_3d", "tma_load_2d_multicast", "tma_load_3d_multicast",
           "tma_store_2d", "tma_store_3d", "bulk_load", "bulk_store", "bulk_commit_group",
           "bulk_wait_group_read", "bulk_wait_group", "fence_proxy_tensormap_acquire",
           "prefetch_tensormap"]
