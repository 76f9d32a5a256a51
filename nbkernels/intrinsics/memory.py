"""Addresses and 16-byte vector accesses.

``smem_addr(array, index)`` gives the 32-bit shared-space address that ``ldmatrix``
and ``cp.async`` take; ``gmem_addr(array, index)`` the 64-bit global address of an
element of a global array. ``ld_global_v4`` / ``st_global_v4`` move 16 bytes as
four 32-bit words (``ld.global.v4.u32``); the address must be 16-byte aligned.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from . import sim
from .factory import build
from .spec import Element, InstructionSpec, Operand

SM75 = Arch(7, 5)

smem_addr = build(InstructionSpec(
    name="smem_addr",
    family="address",
    ptx=("{ .reg .u64 %nbk_a; cvta.to.shared.u64 %nbk_a, $ptr; "
         "cvt.u32.u64 $addr, %nbk_a; }"),
    outputs=(Operand("addr", types.uint32),),
    inputs=(Element("ptr", doc="a cuda.shared.array (static or dynamic) and an index"),),
    min_arch=SM75,
    simulate=sim.shared_address,
    doc="32-bit shared-space address of array[index] (array must live in shared memory).",
))

gmem_addr = build(InstructionSpec(
    name="gmem_addr",
    family="address",
    ptx="cvta.to.global.u64 $addr, $ptr;",
    outputs=(Operand("addr", types.uint64),),
    inputs=(Element("ptr", doc="a global (device) array and an index"),),
    min_arch=SM75,
    simulate=sim.global_address,
    doc="64-bit global-space address of array[index] (array must be a device array).",
))


def _vector(space, addr_type, bytes_of, ld_sass, st_sass):
    """``ld_<space>_v4`` and ``st_<space>_v4``: 16 bytes as four uint32 words."""
    where = f"16-byte-aligned {space}-space address"

    def ld_sim(addr):
        words = bytes_of(int(addr), 16, f"ld_{space}_v4").view(np.uint32)
        return tuple(np.uint32(w) for w in words)

    def st_sim(addr, values):
        if len(values) != 4:
            raise sim.SimulatorError(f"st_{space}_v4: values must be 4 words, got {len(values)}")
        bytes_of(int(addr), 16, f"st_{space}_v4").view(np.uint32)[:] = [
            int(v) & 0xFFFFFFFF for v in values
        ]

    ld = build(InstructionSpec(
        name=f"ld_{space}_v4", family="vector", ptx=f"ld.{space}.v4.u32 $d, [$addr];",
        outputs=(Operand("d", types.uint32, 4),),
        inputs=(Operand("addr", addr_type, doc=where),),
        min_arch=SM75, memory=True, sass=ld_sass, simulate=ld_sim,
        doc=f"Load 16 bytes from {space} memory as four uint32 words."))
    st = build(InstructionSpec(
        name=f"st_{space}_v4", family="vector", ptx=f"st.{space}.v4.u32 [$addr], $values;",
        inputs=(Operand("addr", addr_type, doc=where),
                Operand("values", types.uint32, 4, doc="four uint32 words")),
        min_arch=SM75, memory=True, sass=st_sass, simulate=st_sim,
        doc=f"Store four uint32 words (16 bytes) to {space} memory."))
    return ld, st


ld_global_v4, st_global_v4 = _vector("global", types.uint64, sim.global_bytes, ("LDG.E.128",),
                                     ("STG.E.128",))
# 16-byte shared accesses (addresses from smem_addr): a warp reading one 16-byte word per lane
# from consecutive words is conflict-free with LDS.128, where four 4-byte loads of the same
# data conflict 4 ways. (LDS.128 on sm_80+, LDS.U.128 on sm_75.)
ld_shared_v4, st_shared_v4 = _vector("shared", types.uint32, sim.shared_bytes, ("LDS",),
                                     ("STS.128",))



def _st_global_v4_if_sim(addr, values, ok):
    if len(values) != 4:
        raise sim.SimulatorError(f"st_global_v4_if: values must be 4 words, got {len(values)}")
    if ok:
        sim.global_bytes(int(addr), 16, "st_global_v4_if").view(np.uint32)[:] = [
            int(v) & 0xFFFFFFFF for v in values
        ]


def _st_global_v4_if(name, cache_op, sass, doc):
    """A predicated 16-byte global store with the cache operator ``cache_op`` ("" for the
    default, ``.cs`` for streaming)."""
    return build(InstructionSpec(
        name=name, family="vector",
        ptx=("{ .reg .pred %nbk_p; setp.ne.u32 %nbk_p, $pred, 0; "
             f"@%nbk_p st.global{cache_op}.v4.u32 [$addr], $values; }}"),
        inputs=(Operand("addr", types.uint64, doc="16-byte-aligned global-space address"),
                Operand("values", types.uint32, 4, doc="four uint32 words"),
                Operand("pred", types.uint32)),
        min_arch=SM75, memory=True, sass=(sass,), simulate=_st_global_v4_if_sim, doc=doc))


# Predicated, so that a guarded 16-byte store in a generated epilogue is one instruction and
# not a basic block per store (see the predicated scalar accesses below).
st_global_v4_if = _st_global_v4_if(
    "st_global_v4_if", "", "STG.E.128",
    "Store four uint32 words (16 bytes) to global memory if pred is non-zero (the address is "
    "not touched otherwise).")
# The same store with the streaming cache operator: st.cs allocates the written lines evict-first
# in L2. The sm90a GEMM's results are written once and not read back, and with the default
# policy they pushed the operand tiles that other blocks were about to read out of L2 (at
# 8192x8192x1024 the kernel read 113 MB from DRAM where 37 MB with the stores knocked out,
# cuBLAS 62 MB: perf-notes s16).
st_global_cs_v4_if = _st_global_v4_if(
    "st_global_cs_v4_if", ".cs", "STG.E.EF.128",
    "st_global_v4_if with the streaming (evict-first) cache operator: for results written once "
    "and not read again by the kernel.")


def _ld_shared_f64_sim(addr):
    return sim.shared_bytes(int(addr), 8, "ld_shared_f64").view(np.float64)[0]


# One double from a 32-bit shared address: a fragment read whose address is a register plus a
# constant folds into LDS.64 [R+imm], where indexing a float64 shared array rebuilds a 64-bit
# index per load (the f64 GEMM spent ~25 integer instructions per DMMA on that).
ld_shared_f64 = build(InstructionSpec(
    name="ld_shared_f64", family="scalar", ptx="ld.shared.f64 $d, [$addr];",
    outputs=(Operand("d", types.float64),),
    inputs=(Operand("addr", types.uint32, doc="8-byte-aligned shared-space address"),),
    min_arch=SM75, memory=True, sass=("LDS",), simulate=_ld_shared_f64_sim,  # LDS.U.64 on sm_75
    doc="Load one float64 from an 8-byte-aligned shared-space address (from smem_addr)."))

__all__ = ["smem_addr", "gmem_addr", "ld_global_v4", "st_global_v4", "st_global_v4_if",
           "st_global_cs_v4_if",
           "ld_shared_v4", "st_shared_v4", "ld_shared_f64"]


# --- scalar global loads/stores by address (GEMM epilogues address outputs by pointer) -----
_SCALAR = {"u16": types.uint16, "u32": types.uint32, "s32": types.int32,
           "f32": types.float32, "f64": types.float64}
_NP = {"u16": np.uint16, "u32": np.uint32, "s32": np.int32, "f32": np.float32, "f64": np.float64}


def _scalar_access(suffix):
    ty, npt = _SCALAR[suffix], _NP[suffix]
    width = np.dtype(npt).itemsize
    ptx_t = {"u16": "u16", "u32": "u32", "s32": "s32", "f32": "f32", "f64": "f64"}[suffix]

    def ld_sim(addr):
        return sim.global_bytes(int(addr), width, f"ld_global_{suffix}").view(npt)[0]

    def st_sim(addr, value):
        sim.global_bytes(int(addr), width, f"st_global_{suffix}").view(npt)[0] = value

    ld = build(InstructionSpec(
        name=f"ld_global_{suffix}", family="scalar", ptx=f"ld.global.{ptx_t} $d, [$addr];",
        outputs=(Operand("d", ty),), inputs=(Operand("addr", types.uint64),),
        min_arch=SM75, memory=True, sass=("LDG",), simulate=ld_sim,
        doc=f"Load one {suffix} from a {width}-byte-aligned global address."))
    st = build(InstructionSpec(
        name=f"st_global_{suffix}", family="scalar", ptx=f"st.global.{ptx_t} [$addr], $value;",
        inputs=(Operand("addr", types.uint64), Operand("value", ty)),
        min_arch=SM75, memory=True, sass=("STG",), simulate=st_sim,
        doc=f"Store one {suffix} to a {width}-byte-aligned global address."))
    return ld, st


ld_global_u16, st_global_u16 = _scalar_access("u16")
ld_global_u32, st_global_u32 = _scalar_access("u32")
ld_global_s32, st_global_s32 = _scalar_access("s32")
ld_global_f32, st_global_f32 = _scalar_access("f32")
ld_global_f64, st_global_f64 = _scalar_access("f64")

__all__ += [f"{op}_global_{s}" for s in _SCALAR for op in ("ld", "st")]


# --- predicated scalar accesses: branch-free guarded epilogues -----------------------------
# A guarded store written as `if ok: store` makes one basic block per element; numba's IR
# inliner copies a callee's scope once per block, so a 128-element epilogue inlined that way
# took ~60 s to compile. The predicate moves into the instruction instead.
_ZERO = {"u16": "mov.b16 $d, 0;", "u32": "mov.b32 $d, 0;", "s32": "mov.b32 $d, 0;",
         "f32": "mov.b32 $d, 0;"}


def _predicated(suffix):
    ty, npt = _SCALAR[suffix], _NP[suffix]
    width = np.dtype(npt).itemsize
    pred = "{ .reg .pred %nbk_p; setp.ne.u32 %nbk_p, $pred, 0; "

    def ld_sim(addr, ok):
        if not ok:
            return npt(0)
        return sim.global_bytes(int(addr), width, f"ld_global_{suffix}_if").view(npt)[0]

    def st_sim(addr, value, ok):
        if ok:
            sim.global_bytes(int(addr), width, f"st_global_{suffix}_if").view(npt)[0] = value

    ld = build(InstructionSpec(
        name=f"ld_global_{suffix}_if", family="scalar",
        ptx=pred + _ZERO[suffix] + f" @%nbk_p ld.global.{suffix} $d, [$addr]; }}",
        outputs=(Operand("d", ty),),
        inputs=(Operand("addr", types.uint64), Operand("pred", types.uint32)),
        min_arch=SM75, memory=True, sass=("LDG",), simulate=ld_sim,
        doc=f"Load one {suffix} if pred is non-zero, else return 0 (the address is not read)."))
    st = build(InstructionSpec(
        name=f"st_global_{suffix}_if", family="scalar",
        ptx=pred + f"@%nbk_p st.global.{suffix} [$addr], $value; }}",
        inputs=(Operand("addr", types.uint64), Operand("value", ty), Operand("pred", types.uint32)),
        min_arch=SM75, memory=True, sass=("STG",), simulate=st_sim,
        doc=f"Store one {suffix} if pred is non-zero (the address is not touched otherwise)."))
    return ld, st


ld_global_u16_if, st_global_u16_if = _predicated("u16")
ld_global_u32_if, st_global_u32_if = _predicated("u32")
ld_global_s32_if, st_global_s32_if = _predicated("s32")
ld_global_f32_if, st_global_f32_if = _predicated("f32")

__all__ += [f"{op}_global_{s}_if" for s in ("u16", "u32", "s32", "f32") for op in ("ld", "st")]


# --- GPU-scope release / acquire: one block hands data in global memory to another ----------
# `cuda.threadfence()` is `membar.gl`, which on sm_70+ is `fence.sc.gpu` (SASS MEMBAR.SC.GPU):
# a sequentially consistent fence, far dearer under load than the acquire/release ordering a
# hand-off needs (CUTLASS's stream-K fixup barrier uses release reductions and acquire loads).
# The pattern: the writer's threads store, fence_acq_rel_gpu(), a warp or block barrier, then
# one thread stores the flag with st_release_gpu_s64; the reader's thread polls it with
# ld_acquire_gpu_s64, a barrier, then its threads fence_acq_rel_gpu() and read.
def _ld_acquire_sim(addr):
    return sim.global_bytes(int(addr), 8, "ld_acquire_gpu_s64").view(np.int64)[0]


def _st_release_sim(addr, value):
    sim.global_bytes(int(addr), 8, "st_release_gpu_s64").view(np.int64)[0] = value


fence_acq_rel_gpu = build(InstructionSpec(
    name="fence_acq_rel_gpu", family="fence", ptx="fence.acq_rel.gpu;",
    min_arch=SM75, min_ptx=(6, 0), memory=True, sass=("MEMBAR",),
    simulate=lambda: None,  # the simulator's memory is one array: writes are visible at once
    doc="Acquire-release fence at GPU scope (``fence.acq_rel.gpu``): this thread's earlier "
        "memory accesses are ordered before its later ones for every thread of the GPU that "
        "synchronizes with it; cheaper than ``cuda.threadfence()`` (``fence.sc.gpu``)."))

ld_acquire_gpu_s64 = build(InstructionSpec(
    name="ld_acquire_gpu_s64", family="scalar", ptx="ld.acquire.gpu.global.s64 $d, [$addr];",
    outputs=(Operand("d", types.int64),),
    inputs=(Operand("addr", types.uint64, doc="8-byte-aligned global-space address"),),
    min_arch=SM75, min_ptx=(6, 0), memory=True, sass=("LDG",), simulate=_ld_acquire_sim,
    doc="Load one int64 with acquire semantics at GPU scope (a flag another block releases): "
        "this thread's later accesses see what the releasing thread's release covered."))

st_release_gpu_s64 = build(InstructionSpec(
    name="st_release_gpu_s64", family="scalar", ptx="st.release.gpu.global.s64 [$addr], $value;",
    inputs=(Operand("addr", types.uint64, doc="8-byte-aligned global-space address"),
            Operand("value", types.int64)),
    min_arch=SM75, min_ptx=(6, 0), memory=True, sass=("STG",), simulate=_st_release_sim,
    doc="Store one int64 with release semantics at GPU scope (a flag another block acquires): "
        "what this thread wrote or synchronized with before it is visible to that block."))

__all__ += ["fence_acq_rel_gpu", "ld_acquire_gpu_s64", "st_release_gpu_s64"]
