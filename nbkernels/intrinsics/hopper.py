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
* Thread-block clusters (sm_90): ``cluster_ctarank()`` / ``cluster_nctarank()`` read this
  CTA's rank in its cluster and the cluster's CTA count; ``mapa_shared_cluster(addr, rank)``
  maps a shared address of this CTA to the same offset in CTA ``rank`` of the cluster (a
  ``shared::cluster`` address for ``mbarrier_arrive_cluster``); ``barrier_cluster_arrive()``
  (release; ``_relaxed``: no ordering) and ``barrier_cluster_wait()`` (acquire) split a barrier
  over every thread of every CTA in the cluster (each thread arrives once, then waits);
  ``fence_mbarrier_init()`` orders this thread's ``mbarrier_init`` before the other CTAs'
  accesses that follow a cluster barrier. numba's simulator runs the blocks of a grid one at a
  time, so it models clusters of one CTA (rank 0 of 1): the cluster barrier is a block-wide
  barrier there and ``mapa_shared_cluster`` takes rank 0 only. ``st_shared_cluster_f32(addr,
  value)`` stores into the shared memory of the CTA a ``mapa_shared_cluster`` address names
  (distributed shared memory; visible there after a cluster barrier). A launch without a cluster
  shape is such a cluster of one on the GPU too.
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..arch import Arch
from ..errors import SimulatorError
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

# --- thread-block clusters -------------------------------------------------------------------
def _mapa_sim(addr, rank):
    if int(rank) != 0:
        raise SimulatorError(
            f"mapa_shared_cluster: rank {int(rank)} is outside the cluster; numba's simulator "
            "runs clusters of one CTA (rank 0)")
    sim.shared_bytes(int(addr), 1, "mapa_shared_cluster")  # a shared address of this block
    return np.uint32(addr)


def _cluster_barrier_state():
    import threading

    block, _, nthreads = sim.current_thread_ids()
    st = sim.launch_state()
    with st.lock:
        table = st.objects.setdefault("cluster_barrier", {})
        if block not in table:  # [arrivals in the open phase, phase, condition]
            table[block] = [0, 0, threading.Condition()]
        return table[block], nthreads


def _cluster_arrive_sim():
    bar, nthreads = _cluster_barrier_state()
    thread, _ = sim._sim_kernel()
    with bar[2]:
        if getattr(thread, "_nbk_cluster_phase", None) == (sim._launch_key(), bar[1]):
            raise SimulatorError("barrier_cluster_arrive: this thread arrived twice without "
                                 "barrier_cluster_wait between")
        thread._nbk_cluster_phase = (sim._launch_key(), bar[1])
        bar[0] += 1
        if bar[0] == nthreads:
            bar[0], bar[1] = 0, bar[1] + 1
            bar[2].notify_all()


def _cluster_wait_sim():
    bar, nthreads = _cluster_barrier_state()
    thread, _ = sim._sim_kernel()
    mine = getattr(thread, "_nbk_cluster_phase", None)
    if mine is None or mine[0] != sim._launch_key():
        raise SimulatorError("barrier_cluster_wait: this thread has not called "
                             "barrier_cluster_arrive")
    with bar[2]:  # sleeps until the phase ends (perf-notes c3: a spinning wait starves the rest)
        if not bar[2].wait_for(lambda: bar[1] > mine[1], sim.WARP_TIMEOUT_S):
            raise SimulatorError(
                f"barrier_cluster_wait: {bar[0]} of {nthreads} threads arrived within "
                f"{sim.WARP_TIMEOUT_S:.0f} s (a thread exited or waits elsewhere)")
    thread._nbk_cluster_phase = None


def _special(name, reg, doc, value):
    return build(InstructionSpec(
        name=name, family="cluster", ptx=f"mov.u32 $v, %{reg};",
        outputs=(Operand("v", types.uint32),), min_arch=SM90, min_ptx=(7, 8),
        sass=("S2UR",), simulate=lambda: np.uint32(value), doc=doc))


cluster_ctarank = _special("cluster_ctarank", "cluster_ctarank",
                           "This CTA's rank in its cluster (0 .. cluster_nctarank() - 1).", 0)
cluster_nctarank = _special("cluster_nctarank", "cluster_nctarank",
                            "CTAs in this CTA's cluster (1 without a cluster launch).", 1)

mapa_shared_cluster = build(InstructionSpec(
    name="mapa_shared_cluster", family="cluster",
    ptx="mapa.shared::cluster.u32 $out, $addr, $rank;",
    outputs=(Operand("out", types.uint32),),
    inputs=(Operand("addr", types.uint32, doc="shared address in this CTA"),
            Operand("rank", types.uint32, doc="the cluster rank of the CTA to address")),
    min_arch=SM90, min_ptx=(7, 8), simulate=_mapa_sim,  # address arithmetic: no own opcode
    doc="The shared::cluster address of the same offset as addr in CTA rank of the cluster."))


def _st_cluster_sim(addr, value):
    # a shared::cluster address from mapa_shared_cluster: in a cluster of one, this CTA's own
    sim.shared_bytes(int(addr), 4, "st_shared_cluster_f32").view(np.float32)[0] = value


st_shared_cluster_f32 = build(InstructionSpec(
    name="st_shared_cluster_f32", family="cluster",
    ptx="st.shared::cluster.f32 [$addr], $value;",
    inputs=(Operand("addr", types.uint32,
                    doc="4-byte-aligned shared::cluster address (mapa_shared_cluster)"),
            Operand("value", types.float32)),
    min_arch=SM90, min_ptx=(7, 8), memory=True, sass=("ST.E",), simulate=_st_cluster_sim,
    doc="Store one float32 into the shared memory of a CTA of this cluster (distributed "
        "shared memory); a later cluster barrier makes it visible there."))


def _cluster_barrier(name, ptx, doc, simulate, sass):
    return build(InstructionSpec(
        name=name, family="cluster", ptx=ptx, min_arch=SM90, min_ptx=(8, 0), memory=True,
        sass=sass, simulate=simulate, doc=doc))


barrier_cluster_arrive = _cluster_barrier(
    "barrier_cluster_arrive", "barrier.cluster.arrive.release;",
    "Arrive on the cluster barrier (every thread of every CTA), releasing prior accesses.",
    _cluster_arrive_sim, ("UCGABAR_ARV",))
barrier_cluster_arrive_relaxed = _cluster_barrier(
    "barrier_cluster_arrive_relaxed", "barrier.cluster.arrive.relaxed;",
    "Arrive on the cluster barrier without ordering prior memory accesses.",
    _cluster_arrive_sim, ("UCGABAR_ARV",))
barrier_cluster_wait = _cluster_barrier(
    "barrier_cluster_wait", "barrier.cluster.wait.acquire;",
    "Wait until every thread of the cluster has arrived on the cluster barrier (acquire).",
    _cluster_wait_sim, ("UCGABAR_WAIT",))
fence_mbarrier_init = _cluster_barrier(
    "fence_mbarrier_init", "fence.mbarrier_init.release.cluster;",
    "Release this thread's prior mbarrier_init to the cluster (before a cluster barrier).",
    lambda: None, ())

__all__ = ["fence_proxy_async", "setmaxnreg_inc", "setmaxnreg_dec", "stmatrix_x1",
           "stmatrix_x2", "stmatrix_x4", "stmatrix_x1_trans", "stmatrix_x2_trans",
           "stmatrix_x4_trans", "elect_sync", "cluster_ctarank", "cluster_nctarank",
           "mapa_shared_cluster", "st_shared_cluster_f32", "barrier_cluster_arrive", "barrier_cluster_arrive_relaxed",
           "barrier_cluster_wait", "fence_mbarrier_init"]
