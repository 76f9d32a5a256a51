"""``mbarrier``: shared-memory barriers with arrival counts and transaction bytes (sm_80+/sm_90).

An mbarrier is an 8-byte object in shared memory (``smem_addr`` of an 8-aligned uint64).
A phase completes when ``count`` arrivals have been made and the transaction count (bytes
announced with ``expect_tx`` minus bytes delivered by TMA copies) is back to zero; the
barrier then starts the next phase. Waiting is by phase parity: ``mbarrier_try_wait_parity
(addr, p)`` returns 1 once the phase of parity ``p`` has completed (the first phase has
parity 0), so a consumer alternates p = 0, 1, 0, ... over the phases it waits for.

The usual TMA handshake: one thread calls ``mbarrier_init(addr, 1)`` and ``fence_proxy_async``
(so the async proxy sees the initialised barrier) before a ``syncthreads``; per stage one
thread calls ``mbarrier_arrive_expect_tx(addr, nbytes)`` and issues the TMA loads; every
consumer loops ``while not mbarrier_try_wait_parity(addr, phase): pass``.

In a cluster (sm_90), ``mbarrier_arrive_cluster(addr)`` arrives on a barrier of another CTA:
``addr`` is a ``shared::cluster`` address from ``mapa_shared_cluster`` (nbkernels.intrinsics.
hopper); the arrival has the default semantics (release at CTA scope, no GPU-wide fence).
"""
from __future__ import annotations

import threading
import time

import numpy as np
from numba import types

from ..arch import Arch
from ..errors import SimulatorError
from . import sim
from .factory import build
from .spec import InstructionSpec, Operand

SM80, SM90 = Arch(8, 0), Arch(9, 0)
TX_LIMIT = 2**20 - 1  # the tx-count range of the PTX ISA


# --- simulator state: one record per barrier address of the launch -------------------------
class _Barrier:
    def __init__(self, count):
        self.expected = count
        self.pending = count
        self.tx = 0
        self.phase = 0  # parity of the current (incomplete) phase

    def _maybe_complete(self):
        """Start the next phase once arrivals and bytes are all in (called under ``_lock``),
        waking the threads that wait on a phase."""
        if self.pending == 0 and self.tx == 0:
            self.phase ^= 1
            self.pending = self.expected
            _lock.notify_all()

    def describe(self):
        return (f"phase parity {self.phase}, {self.pending} of {self.expected} arrivals "
                f"pending, tx-count {self.tx}")


# Guards every barrier of the launch; notified whenever a phase completes, so that a waiting
# thread sleeps until then instead of polling (a polling loop of 128 simulated threads took the
# interpreter from the threads that arrive).
_lock = threading.Condition()
#: The longest a simulated try_wait blocks before it returns 0 (the kernel then tries again).
WAIT_SLICE_S = 0.05


def _table():
    return sim.launch_state().objects.setdefault("mbarrier", {})


def _get(addr, what) -> _Barrier:
    sim.shared_bytes(int(addr), 8, what)  # inside a shared array, 8-byte aligned
    b = _table().get(int(addr))
    if b is None:
        raise SimulatorError(f"{what}: no mbarrier was initialised at shared address "
                             f"{int(addr):#x} in this block (call mbarrier_init first)")
    return b


def _init(addr, count):
    count = int(count)
    if not 1 <= count <= TX_LIMIT:
        raise SimulatorError(f"mbarrier_init: count must be in [1, {TX_LIMIT}], got {count}")
    sim.shared_bytes(int(addr), 8, "mbarrier_init")
    with _lock:
        _table()[int(addr)] = _Barrier(count)


def _add_tx(b, nbytes, what):
    b.tx += nbytes
    if abs(b.tx) > TX_LIMIT:
        raise SimulatorError(f"{what}: tx-count {b.tx} leaves the range +-{TX_LIMIT}")


def _arrive(addr, nbytes=0, what="mbarrier_arrive"):
    with _lock:
        b = _get(addr, what)
        _add_tx(b, int(nbytes), what)
        state = b.phase
        b.pending -= 1
        b._maybe_complete()
    return np.uint64(state)


def _expect_tx(addr, nbytes):
    with _lock:
        b = _get(addr, "mbarrier_expect_tx")
        _add_tx(b, int(nbytes), "mbarrier_expect_tx")


def complete_tx(addr, nbytes, what):
    """Bytes delivered by an asynchronous copy (TMA) that signals this barrier."""
    with _lock:
        b = _get(addr, what)
        _add_tx(b, -int(nbytes), what)
        b._maybe_complete()


def _try_wait_parity(addr, parity):
    with _lock:
        b = _get(addr, "mbarrier_try_wait_parity")
        done = b.phase != (int(parity) & 1)
        if not done:  # as the hardware's try_wait: wait a while for the phase, then give up
            _lock.wait(WAIT_SLICE_S)
            done = b.phase != (int(parity) & 1)
        state = None if done else b.describe()  # only a timeout's message reads it
    thread, _ = sim._sim_kernel()
    polls = thread.__dict__.setdefault("_nbk_mbar_polls", {})
    key = (sim._launch_key(), int(addr), int(parity) & 1)
    if done:
        polls.pop(key, None)
        return np.uint32(1)
    first = polls.setdefault(key, time.monotonic())
    if time.monotonic() - first > sim.WARP_TIMEOUT_S:
        raise SimulatorError(
            f"mbarrier_try_wait_parity: the phase of parity {int(parity) & 1} at shared address "
            f"{int(addr):#x} did not complete within {sim.WARP_TIMEOUT_S:.0f} s ({state}): an "
            "arrival or a transfer is missing")
    return np.uint32(0)


def _arrive_cluster(addr):
    # The simulator's clusters hold one CTA: mapa_shared_cluster(addr, 0) is addr itself.
    _arrive(addr, 0, "mbarrier_arrive_cluster")


# --- specs ----------------------------------------------------------------------------------
_ADDR = Operand("addr", types.uint32, doc="shared address of the 8-byte mbarrier")


def _spec(name, ptx, outputs=(), inputs=(), min_arch=SM90, min_ptx=(8, 0), sass=(),
          simulate=None, doc="", mnemonic=""):
    return build(InstructionSpec(
        name=name, family="mbarrier", ptx=ptx, outputs=outputs, inputs=(_ADDR,) + inputs,
        min_arch=min_arch, min_ptx=min_ptx, memory=True, sass=sass, simulate=simulate,
        doc=doc, mnemonic=mnemonic))


mbarrier_init = _spec(
    "mbarrier_init", "mbarrier.init.shared::cta.b64 [$addr], $count;",
    inputs=(Operand("count", types.uint32, doc="arrivals per phase"),),
    min_arch=SM80, min_ptx=(7, 8), sass=("SYNCS.EXCH",), simulate=_init,
    doc="Initialise an mbarrier expecting count arrivals per phase (phase parity 0).")

mbarrier_arrive = _spec(
    "mbarrier_arrive", "mbarrier.arrive.shared::cta.b64 $state, [$addr];",
    outputs=(Operand("state", types.uint64),),
    min_arch=SM80, min_ptx=(7, 8), sass=("SYNCS.ARRIVE",), simulate=_arrive,
    doc="Arrive once; returns an opaque state word (the phase arrived on).")

mbarrier_arrive_expect_tx = _spec(
    "mbarrier_arrive_expect_tx", "mbarrier.arrive.expect_tx.shared::cta.b64 $state, [$addr], $tx;",
    outputs=(Operand("state", types.uint64),),
    inputs=(Operand("tx", types.uint32, doc="bytes the current phase will also wait for"),),
    sass=("SYNCS.ARRIVE",), simulate=lambda a, tx: _arrive(a, tx, "mbarrier_arrive_expect_tx"),
    doc="Announce tx bytes of asynchronous transfers for the current phase, then arrive once.")

# The default semantics (release at CTA scope), as CUTLASS's ClusterBarrier::arrive(cta_id):
# `.release.cluster` assembles to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU + ERRBAR before the arrive
# (ptxas 13.x, sm_90a), which the sm90a GEMM's consumers paid on every k-tile (H200 session 5:
# 5-9% of the cluster kernel's stall samples; perf-notes s4). A consumer releasing a slot it
# read through wgmma has nothing left to order: wgmma.wait_group already retired the reads.
mbarrier_arrive_cluster = _spec(
    "mbarrier_arrive_cluster", "mbarrier.arrive.shared::cluster.b64 _, [$addr];",
    sass=("SYNCS.ARRIVE",), simulate=_arrive_cluster,
    mnemonic="mbarrier.arrive.shared::cluster.b64",
    doc="Arrive once on an mbarrier of any CTA of the cluster (addr from mapa_shared_cluster), "
        "with the default release at CTA scope (no GPU-wide fence; order other memory with a "
        "fence first if the peer must see it); no state word.")

mbarrier_expect_tx = _spec(
    "mbarrier_expect_tx", "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$addr], $tx;",
    inputs=(Operand("tx", types.uint32, doc="bytes the current phase will also wait for"),),
    sass=("SYNCS.ARRIVE",), simulate=_expect_tx,
    doc="Announce tx bytes of asynchronous transfers for the current phase (no arrival).")

mbarrier_try_wait_parity = _spec(
    "mbarrier_try_wait_parity",
    "{ .reg .pred %nbk_p; mbarrier.try_wait.parity.shared::cta.b64 %nbk_p, [$addr], $parity; "
    "selp.u32 $done, 1, 0, %nbk_p; }",
    outputs=(Operand("done", types.uint32),),
    inputs=(Operand("parity", types.uint32, doc="parity of the phase waited for (0 or 1)"),),
    min_ptx=(7, 8), sass=("SYNCS.PHASECHK",), simulate=_try_wait_parity,
    mnemonic="mbarrier.try_wait.parity.shared::cta.b64",
    doc="1 if the phase of this parity has completed, else 0 after a bounded wait; loop on it.")

__all__ = ["mbarrier_init", "mbarrier_arrive", "mbarrier_arrive_cluster", "mbarrier_arrive_expect_tx",
           "mbarrier_expect_tx", "mbarrier_try_wait_parity"]
