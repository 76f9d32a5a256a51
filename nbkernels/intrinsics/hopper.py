"""Small Hopper instructions: async-proxy fence, register reallocation, ``stmatrix``, ``elect.sync``.

* ``fence_proxy_async()``: ``fence.proxy.async.shared::cta`` (sm_90): makes this thread's
  ordinary shared-memory writes (and an ``mbarrier_init``) visible to the async proxy, i.e.
  to TMA and wgmma, which read shared memory through it.
* ``setmaxnreg_inc(n)`` / ``setmaxnreg_dec(n)`` (sm_90a): all 128 threads of a warpgroup
  change their register budget to ``n`` (24..256, a multiple of 8), for producer/consumer
  warpgroups. ptxas ignores it (warning C7508) unless the kernel declares both its block size
  and blocks per SM: ``launch_bounds=(threads, 1)``, giving 65536 / threads registers at
  entry (384 threads: 168, hence CUTLASS's dec 40 / inc 232 for 1 producer + 2 consumers).
* ``stmatrix_x{1,2,4}[_trans](addr, regs)`` (sm_90): the inverse of ``ldmatrix``: lanes
  8j..8j+7 give the row addresses of 8x8 b16 matrix j, and every lane stores, per matrix,
  one register holding row ``lane >> 2``, columns ``2*(lane % 4)`` and ``+1`` (``_trans``:
  that column pair of the transpose).
* ``elect_sync(mask)`` (sm_90): 1 in exactly one lane of ``mask`` (the lowest one, as the
  simulator models it), 0 in the others; all lanes in ``mask`` execute it together.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from . import bits, sim
from .factory import build
from .spec import Const, InstructionSpec, Operand

SM90, SM90A = Arch(9, 0), Arch(9, 0, "a")


def _none(threads):
    return [None] * len(threads)


fence_proxy_async = build(InstructionSpec(
    name="fence_proxy_async", family="fence", ptx="fence.proxy.async.shared::cta;",
    min_arch=SM90, min_ptx=(8, 0), memory=True, sass=("FENCE.VIEW.ASYNC.S",),
    simulate=lambda: None,  # the simulator has one proxy: writes are visible at once
    doc="Order this thread's shared-memory writes before later async-proxy reads "
        "(TMA stores, wgmma operands) and make an initialised mbarrier visible to TMA."))


def _setmaxnreg(direction):
    return build(InstructionSpec(
        name=f"setmaxnreg_{direction}", family="setmaxnreg",
        ptx=f"setmaxnreg.{direction}.sync.aligned.u32 $n;",
        inputs=(Const("n", allowed=tuple(range(24, 257, 8)), doc="registers per thread"),),
        min_arch=SM90A, min_ptx=(8, 0), side_effect=True, convergent=True,
        sass=("USETMAXREG",), simulate=_none, warp_collective_sim=True, sim_group=128,
        doc=f"{'Raise' if direction == 'inc' else 'Lower'} this warpgroup's per-thread "
            "register budget to n (warpgroup-collective; the simulator has no register file)."))


setmaxnreg_inc = _setmaxnreg("inc")
setmaxnreg_dec = _setmaxnreg("dec")


def _stmatrix_sim(nmat, trans, name):
    def simulate(lanes):
        for j in range(nmat):
            for r in range(8):
                addr = int(lanes[8 * j + r][0])
                row = sim.shared_bytes(addr, 16, name).view(np.uint16)
                for c in range(4):  # the 4 lanes holding row r's column pairs
                    regs = lanes[4 * r + c][1]
                    reg = regs[j] if nmat > 1 else regs
                    lo, hi = bits.split16(reg)
                    if not trans:
                        row[2 * c], row[2 * c + 1] = lo, hi
                # transposed: row r of the stored matrix is column r of the fragment
                if trans:
                    for col in range(8):
                        regs = lanes[4 * col + r // 2][1]
                        reg = regs[j] if nmat > 1 else regs
                        row[col] = bits.split16(reg)[r % 2]
        return [None] * 32

    return simulate


def _stmatrix(nmat, trans):
    name = f"stmatrix_x{nmat}" + ("_trans" if trans else "")
    return build(InstructionSpec(
        name=name, family="stmatrix",
        ptx=f"stmatrix.sync.aligned.m8n8.x{nmat}{'.trans' if trans else ''}.shared.b16 "
            "[$addr], $regs;",
        inputs=(Operand("addr", types.uint32, doc="shared address of this lane's row"),
                Operand("regs", types.uint32, nmat, "one register per matrix", braced=True)),
        min_arch=SM90, min_ptx=(7, 8), memory=True, convergent=True, sass=("STSM",),
        simulate=_stmatrix_sim(nmat, trans, name), warp_collective_sim=True,
        doc=f"Store {nmat} 8x8 matrices of 16-bit elements to shared memory"
            + (", transposed" if trans else "") + "; warp-collective (inverse of ldmatrix)."))


stmatrix_x1, stmatrix_x2, stmatrix_x4 = (_stmatrix(n, False) for n in (1, 2, 4))
stmatrix_x1_trans, stmatrix_x2_trans, stmatrix_x4_trans = (_stmatrix(n, True) for n in (1, 2, 4))


def _elect_sim(members):
    # members: the inputs of the lanes in the mask, lowest lane first
    return [np.uint32(1 if i == 0 else 0) for i in range(len(members))]


elect_sync = build(InstructionSpec(
    name="elect_sync", family="elect",
    ptx="{ .reg .pred %nbk_p; elect.sync _|%nbk_p, $mask; selp.u32 $elected, 1, 0, %nbk_p; }",
    mnemonic="elect.sync",
    outputs=(Operand("elected", types.uint32),),
    inputs=(Operand("mask", types.uint32, doc="lanes taking part (all of them execute it)"),),
    min_arch=SM90, min_ptx=(8, 0), convergent=True, sass=("ELECT",),
    simulate=_elect_sim, warp_collective_sim=True, sim_members="mask",
    doc="1 in one elected lane of mask, 0 in the others (warp-collective over mask)."))

__all__ = ["fence_proxy_async", "setmaxnreg_inc", "setmaxnreg_dec", "stmatrix_x1",
           "stmatrix_x2", "stmatrix_x4", "stmatrix_x1_trans", "stmatrix_x2_trans",
           "stmatrix_x4_trans", "elect_sync"]
