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


def _ld_v4(addr):
    words = sim.global_bytes(int(addr), 16, "ld_global_v4").view(np.uint32)
    return tuple(np.uint32(w) for w in words)


def _st_v4(addr, values):
    if len(values) != 4:
        raise sim.SimulatorError(f"st_global_v4: values must be 4 words, got {len(values)}")
    sim.global_bytes(int(addr), 16, "st_global_v4").view(np.uint32)[:] = [
        int(v) & 0xFFFFFFFF for v in values
    ]


ld_global_v4 = build(InstructionSpec(
    name="ld_global_v4",
    family="vector",
    ptx="ld.global.v4.u32 $d, [$addr];",
    outputs=(Operand("d", types.uint32, 4),),
    inputs=(Operand("addr", types.uint64, doc="16-byte-aligned global address"),),
    min_arch=SM75,
    memory=True,
    sass=("LDG.E.128",),
    simulate=_ld_v4,
    doc="Load 16 bytes from global memory as four uint32 words.",
))

st_global_v4 = build(InstructionSpec(
    name="st_global_v4",
    family="vector",
    ptx="st.global.v4.u32 [$addr], $values;",
    inputs=(
        Operand("addr", types.uint64, doc="16-byte-aligned global address"),
        Operand("values", types.uint32, 4, doc="four uint32 words"),
    ),
    min_arch=SM75,
    memory=True,
    sass=("STG.E.128",),
    simulate=_st_v4,
    doc="Store four uint32 words (16 bytes) to global memory.",
))

__all__ = ["smem_addr", "gmem_addr", "ld_global_v4", "st_global_v4"]
