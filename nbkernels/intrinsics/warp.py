"""Warp shuffles for reductions (``shfl.sync.bfly.b32`` over all 32 lanes), the warp vote, the
warp barrier and the named block barriers (``barrier.sync id, count``: a group of warps of a
block).

numba-cuda has ``cuda.shfl_xor_sync``, but its simulator runs no warp operation, so a row
reduction written with it cannot be tested without a GPU. These run through nbkernels' warp
rendezvous in the simulator and lower to the same ``SHFL.BFLY`` on a GPU.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from .factory import build
from .spec import Const, InstructionSpec, Operand


def _bfly_sim(kind):
    def simulate(lanes):
        vals = [lane[0] for lane in lanes]
        masks = {int(lane[1]) for lane in lanes}
        if len(masks) != 1:
            from .sim import SimulatorError

            raise SimulatorError(f"shfl_bfly_{kind}: lanes passed different lane masks {masks}")
        m = masks.pop()
        n = len(vals)
        # A lane whose partner is outside the warp keeps its own value, as shfl does.
        return [kind(vals[i ^ m]) if (i ^ m) < n else kind(vals[i]) for i in range(n)]
    return simulate


def _bfly(suffix, ty, npt):
    return build(InstructionSpec(
        name=f"shfl_bfly_{suffix}",
        family="warp",
        ptx="shfl.sync.bfly.b32 $d, $value, $lane_mask, 31, -1;",
        outputs=(Operand("d", ty),),
        inputs=(Operand("value", ty),
                Const("lane_mask", lo=1, hi=31, doc="partner lane = own lane XOR lane_mask")),
        min_arch=Arch(7, 5),
        min_ptx=(6, 0),
        convergent=True,
        sass=("SHFL.BFLY",),
        simulate=_bfly_sim(npt),
        warp_collective_sim=True,
        doc=(f"Exchange a {suffix} with lane (lane XOR lane_mask) across the full warp "
             "(all 32 lanes must execute it); the building block of butterfly reductions."),
    ))


shfl_bfly_f32 = _bfly("f32", types.float32, np.float32)
shfl_bfly_u32 = _bfly("u32", types.uint32, np.uint32)

warp_sync = build(InstructionSpec(
    name="warp_sync",
    family="warp",
    ptx="bar.warp.sync -1;",
    min_arch=Arch(7, 5),
    min_ptx=(6, 0),
    memory=True,
    convergent=True,
    simulate=lambda lanes: [None] * len(lanes),
    warp_collective_sim=True,
    doc=("Wait for every lane of the warp (``__syncwarp()``), with memory ordering among them: "
         "shared-memory writes made before it by any lane are visible to every lane after it. "
         "numba-cuda's simulator has no ``cuda.syncwarp``; this one rendezvous there."),
))


def _vote_any_sim(lanes):
    got = np.uint32(any(int(lane[0]) != 0 for lane in lanes))
    return [got] * len(lanes)


vote_any = build(InstructionSpec(
    name="vote_any",
    family="warp",
    ptx="{ .reg .pred p, q; setp.ne.u32 p, $pred, 0; vote.sync.any.pred q, p, -1; "
        "selp.u32 $d, 1, 0, q; }",
    outputs=(Operand("d", types.uint32),),
    inputs=(Operand("pred", types.uint32),),
    min_arch=Arch(7, 5),
    min_ptx=(6, 0),
    convergent=True,
    sass=("VOTE",),
    simulate=_vote_any_sim,
    warp_collective_sim=True,
    doc=("1 in every lane if ``pred`` is non-zero in any lane of the full warp, else 0 "
         "(``__any_sync(~0, pred)``). ptxas knows the result is the same in every lane, so a "
         "loop that exits on it stays warp-uniform: a spin-wait written as ``if lane == 0: "
         "while ...`` is a divergent loop, and values carried across it leave the uniform "
         "datapath."),
))


def _lane0_sim(lanes):
    return [np.uint32(lanes[0][0])] * len(lanes)


broadcast_lane0_u32 = build(InstructionSpec(
    name="broadcast_lane0_u32",
    family="warp",
    ptx="shfl.sync.idx.b32 $d, $value, 0, 31, -1;",
    outputs=(Operand("d", types.uint32),),
    inputs=(Operand("value", types.uint32),),
    min_arch=Arch(7, 5),
    min_ptx=(6, 0),
    convergent=True,
    sass=("SHFL.IDX",),
    simulate=_lane0_sim,
    warp_collective_sim=True,
    doc=("Lane 0's ``value`` in every lane of the full warp (``__shfl_sync(~0, value, 0)``). "
         "ptxas knows the result is the same in every lane, so what is computed from it can stay "
         "on the uniform datapath: a warpgroup index taken from ``threadIdx.x`` is a per-thread "
         "value to ptxas, and shared-memory descriptors built from it need an R2UR each time "
         "they reach a ``wgmma`` (CUTLASS broadcasts its warpgroup index the same way)."),
))


def _bar_sync_sim(barrier, count):
    """``barrier.sync barrier, count`` in the simulator: the caller waits until ``count`` threads
    of its block have arrived on ``barrier`` (one phase, reusable), as on the GPU; the warps'
    rendezvous (``sim._Rendezvous``) with nothing to compute."""
    import threading

    from . import sim

    block, _, nthreads = sim.current_thread_ids()
    barrier, count = int(barrier), int(count)
    if not 1 <= barrier <= 15 or count % 32 or not 32 <= count <= nthreads:
        raise sim.SimulatorError(
            f"bar_sync: barrier must be 1-15 (0 is __syncthreads') and count a multiple of 32 "
            f"up to the block's {nthreads} threads, got barrier {barrier}, count {count}")
    st = sim.launch_state()
    with st.lock:
        table = st.objects.setdefault("named_barrier", {})
        bar = table.get((block, barrier))
        if bar is None:
            bar = table[(block, barrier)] = sim._Rendezvous(count, lambda: None)
    if bar.n != count:
        raise sim.SimulatorError(f"bar_sync: barrier {barrier} of block {block} reached with "
                                 f"counts {bar.n} and {count}")
    try:
        bar.wait(timeout=sim.WARP_TIMEOUT_S)
    except threading.BrokenBarrierError:
        raise sim.SimulatorError(
            f"bar_sync: fewer than {count} threads of block {block} reached barrier {barrier} "
            f"within {sim.WARP_TIMEOUT_S:.0f} s (a thread exited or waits at another "
            "barrier)") from None


bar_sync = build(InstructionSpec(
    name="bar_sync",
    family="barrier",
    # not .aligned (bar.sync is barrier.sync.aligned): LLVM may duplicate an inline-asm call
    # into several branches, and the aligned form needs every thread at the same instruction
    ptx="barrier.sync $barrier, $count;",
    inputs=(Operand("barrier", types.uint32, doc="named barrier 1-15 (0 is __syncthreads')"),
            Operand("count", types.uint32, doc="threads that meet there: a multiple of 32")),
    min_arch=Arch(7, 5),
    min_ptx=(6, 0),
    memory=True,
    sass=("BAR.SYNC",),
    simulate=_bar_sync_sim,
    doc=("Wait until ``count`` threads of the block (whole warps) have reached named barrier "
         "``barrier``, with block-scope memory ordering among them, as ``__syncthreads()`` "
         "does for the whole block: lets groups of warps of one block synchronize apart."),
))

__all__ = ["bar_sync", "broadcast_lane0_u32", "shfl_bfly_f32", "shfl_bfly_u32", "vote_any",
           "warp_sync"]
