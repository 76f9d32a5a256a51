"""``cp.async``: asynchronous global-to-shared copies (sm_80+).

``cp_async_ca(dst, src, cp_size, src_size)`` copies ``cp_size`` (4, 8 or 16, a
compile-time constant) bytes, of which only the first ``src_size`` are read from
global memory and the rest are zero-filled: pass ``src_size = 0`` for a
predicated-off (out-of-bounds) copy, which then reads nothing. ``cg`` bypasses L1
and takes 16 bytes only. Copies become visible after ``cp_async_wait_group(N)``
retires their group (``cp_async_commit_group`` closes one).
"""
from __future__ import annotations

from numba import types

from ..arch import Arch
from . import sim
from .factory import build
from .spec import Const, InstructionSpec, Operand

SM80 = Arch(8, 0)


def _copy_spec(cache, sizes, prefetch=0):
    name = f"cp_async_{cache}" + (f"_pf{prefetch}" if prefetch else "")
    hint = f".L2::{prefetch}B" if prefetch else ""

    def simulate(dst, src, cp_size, src_size):
        sim.cp_async_issue(int(dst), int(src), int(cp_size), int(src_size), name)

    return build(InstructionSpec(
        name=name,
        family="cp.async",
        ptx=f"cp.async.{cache}.shared.global{hint} [$dst], [$src], $cp_size, $src_size;",
        inputs=(
            Operand("dst", types.uint32, doc="shared-space address, cp_size-aligned"),
            Operand("src", types.uint64, doc="global address (gmem_addr), cp_size-aligned"),
            Const("cp_size", allowed=sizes, doc="bytes copied"),
            Operand("src_size", types.uint32, doc="bytes read from src; the rest are zeroed"),
        ),
        min_arch=SM80,
        min_ptx=(7, 4) if prefetch else (7, 0),
        memory=True,
        sass=(f"LDGSTS.E.BYPASS.LTC{prefetch}B",) if prefetch else ("LDGSTS",),
        simulate=simulate,
        doc=f"Asynchronous copy global -> shared, cache policy .{cache}, with zero-fill"
            + (f"; asks L2 to fetch the whole {prefetch}-byte block around src "
               "(a prefetch hint: the copy's result is the same)." if prefetch else "."),
    ))


cp_async_ca = _copy_spec("ca", (4, 8, 16))
cp_async_cg = _copy_spec("cg", (16,))
cp_async_cg_pf256 = _copy_spec("cg", (16,), prefetch=256)

cp_async_commit_group = build(InstructionSpec(
    name="cp_async_commit_group",
    family="cp.async",
    ptx="cp.async.commit_group;",
    min_arch=SM80,
    min_ptx=(7, 0),
    memory=True,
    sass=("LDGDEPBAR",),
    simulate=sim.cp_async_commit,
    doc="Close the calling thread's pending cp.async copies into one group.",
))

cp_async_wait_group = build(InstructionSpec(
    name="cp_async_wait_group",
    family="cp.async",
    ptx="cp.async.wait_group $n;",
    inputs=(Const("n", lo=0, hi=63, doc="groups that may stay in flight"),),
    min_arch=SM80,
    min_ptx=(7, 0),
    memory=True,
    sass=("DEPBAR",),
    simulate=lambda n: sim.cp_async_wait(int(n)),
    doc="Wait until at most n of the calling thread's committed groups are in flight.",
))


def _wait_all():
    sim.cp_async_commit()
    sim.cp_async_wait(0)


cp_async_wait_all = build(InstructionSpec(
    name="cp_async_wait_all",
    family="cp.async",
    ptx="cp.async.wait_all;",
    min_arch=SM80,
    min_ptx=(7, 0),
    memory=True,
    sass=("DEPBAR",),
    simulate=_wait_all,
    doc="Commit the pending copies and wait for every group (commit_group + wait_group(0)).",
))

__all__ = [n for n in dir() if n.startswith("cp_async_")]
