"""Runtime that lets nbkernels intrinsics run inside numba's CUDA simulator.

numba's simulator runs each CUDA thread of a block as a Python thread and has no
warp operations. This module adds what the intrinsics need:

* a warp rendezvous: a warp-collective instruction waits until every lane of its
  warp has reached it, then computes all lanes' results at once, as the hardware
  does (``.sync.aligned`` means all 32 lanes execute it together);
* two virtual address spaces, 32-bit shared and 64-bit global, so that the address
  helpers return integers that kernels can do arithmetic on, and the instructions that
  take addresses (``ldmatrix``, ``cp.async``, vector loads) find the bytes again;
* ``cp.async`` groups per thread: copies land in shared memory when a
  ``wait_group`` retires their group, not before, so a kernel that reads a stage
  before waiting for it sees stale data here as it might on the GPU.
"""
from __future__ import annotations

import bisect
import threading

import numpy as np

from ..errors import SimulatorError

#: Seconds a lane waits at a warp-collective instruction for the rest of its warp.
WARP_TIMEOUT_S = 120.0

_SHARED_BASE = 0x400  # keep 0 invalid, as on the GPU
_GLOBAL_BASE = 0x7F00_0000_0000
_REGION_ALIGN = 1024  # 1024 B like the GPU's dynamic shared memory; swizzles rely on it


def _sim_kernel():
    try:
        from numba.cuda.simulator.kernel import BlockThread
    except ImportError:  # pragma: no cover - numba-cuda always ships the simulator
        return None, None
    t = threading.current_thread()
    if isinstance(t, BlockThread):
        return t, t._manager
    return None, None


def in_simulated_kernel() -> bool:
    return _sim_kernel()[0] is not None


def _launch_key():
    from numba.cuda.simulator.kernel import _get_kernel_context

    return id(_get_kernel_context())


# ---------------------------------------------------------------------------------------
# Host arrays behind simulator arrays
# ---------------------------------------------------------------------------------------
def host_array(a) -> np.ndarray:
    """The NumPy array behind a simulator kernel argument or shared/local array."""
    seen = 0
    while not isinstance(a, np.ndarray):
        if hasattr(a, "_item"):
            a = a._item
        elif hasattr(a, "_ary"):
            a = a._ary
        else:
            raise SimulatorError(f"expected an array inside a simulated kernel, got {type(a)}")
        seen += 1
        if seen > 4:
            raise SimulatorError(f"cannot find the NumPy array behind {type(a)}")
    return a


def _owner(a: np.ndarray) -> np.ndarray:
    """The array that owns the memory ``a`` views (through views and frombuffer)."""
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
        elif isinstance(b, memoryview) and isinstance(b.obj, np.ndarray):
            a = b.obj
        else:
            return a


def memory_bytes(owner: np.ndarray) -> np.ndarray:
    """The bytes of an owning array in memory order, as a view (never a copy)."""
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        raise SimulatorError(f"array memory of shape {owner.shape} is not contiguous")
    # reshape(-1) of an F-ordered array would be a C-order *copy*; order="A" follows memory.
    flat = owner.reshape(-1, order="A").view(np.uint8)
    if flat.__array_interface__["data"][0] != owner.__array_interface__["data"][0]:
        raise SimulatorError("internal: byte view of an array is not a view")
    return flat


def element_host_ptr(a: np.ndarray, index) -> int:
    if not isinstance(index, tuple):
        index = (index,)
    if len(index) != a.ndim:
        raise SimulatorError(f"expected {a.ndim} indices, got {len(index)}")
    off = 0
    for i, n, s in zip(index, a.shape, a.strides):
        i = int(i)
        if not 0 <= i < n:
            raise SimulatorError(f"index {index} is out of bounds for shape {a.shape}")
        off += i * s
    return a.__array_interface__["data"][0] + off


class AddressSpace:
    """Maps host buffers to virtual device addresses and back.

    The simulator runs a block's threads as Python threads, which may register arrays at the
    same time: registration and lookup hold a lock (without it two threads could take the same
    start address, or insert into the sorted lists at stale positions)."""

    def __init__(self, name, base, limit):
        self.name = name
        self.base = base
        self.limit = limit
        self._next = base
        self._starts = []  # virtual starts, sorted
        self._regions = []  # (vstart, nbytes, host_start, owner)
        self._by_owner = {}
        self._flat = {}  # vstart -> the owner's bytes as a uint8 view, made on first access
        self._lock = threading.Lock()

    def _region_of(self, owner: np.ndarray):
        r = self._by_owner.get(id(owner))
        if r is not None:
            return r
        with self._lock:
            return self._register(owner)

    def _register(self, owner: np.ndarray):
        r = self._by_owner.get(id(owner))  # again, under the lock
        if r is None:
            nbytes = owner.nbytes
            vstart = self._next
            self._next = -(-(vstart + max(nbytes, 1)) // _REGION_ALIGN) * _REGION_ALIGN
            if self._next > self.limit:
                raise SimulatorError(f"simulated {self.name} address space exhausted")
            r = (vstart, nbytes, owner.__array_interface__["data"][0], owner)
            self._by_owner[id(owner)] = r
            pos = bisect.bisect(self._starts, vstart)
            self._starts.insert(pos, vstart)
            self._regions.insert(pos, r)
        return r

    def address_of(self, a: np.ndarray, index) -> int:
        owner = _owner(a)
        vstart, nbytes, hstart, _ = self._region_of(owner)
        return vstart + (element_host_ptr(a, index) - hstart)

    def bytes_at(self, vaddr: int, nbytes: int, what: str) -> np.ndarray:
        """A writable uint8 view of ``nbytes`` at virtual address ``vaddr``."""
        with self._lock:
            pos = bisect.bisect(self._starts, vaddr) - 1
            region = self._regions[pos] if pos >= 0 else None
            flat = self._flat.get(region[0]) if region is not None else None
        if region is not None:
            vstart, size, _, owner = region
            off = vaddr - vstart
            if 0 <= off and off + nbytes <= size:
                if flat is None:  # one view per array, not one per access
                    flat = memory_bytes(owner)
                    with self._lock:
                        self._flat[vstart] = flat
                return flat[off : off + nbytes]
        near = ""
        if region is not None:
            vstart, size, _, owner = region
            near = (f" (nearest below: {size} B {owner.dtype} array of shape {owner.shape} at "
                    f"{vstart:#x}, ending {vaddr + nbytes - vstart - size} B before this access ends)")
        raise SimulatorError(
            f"{what}: address {vaddr:#x} (+{nbytes} B) is not inside any {self.name} array "
            f"of this simulated launch{near}"
        )


class _LaunchState:
    def __init__(self):
        self.shared = AddressSpace("shared", _SHARED_BASE, 0xFFFF_FFFF)
        self.global_ = AddressSpace("global", _GLOBAL_BASE, 0x7FFF_FFFF_FFFF)
        self.warps = {}
        self.lock = threading.Lock()
        self.objects = {}  # per-launch state of other instructions (mbarriers), by kind


_state_lock = threading.Lock()
_state = {"key": None, "launch": None}


def launch_state() -> _LaunchState:
    key = _launch_key()
    with _state_lock:
        if _state["key"] != key or _state["launch"] is None:
            _state["key"] = key
            _state["launch"] = _LaunchState()
        return _state["launch"]


def shared_address(arr, index) -> int:
    return launch_state().shared.address_of(host_array(arr), index)


def global_address(arr, index) -> int:
    return launch_state().global_.address_of(host_array(arr), index)


def shared_bytes(addr: int, nbytes: int, what: str) -> np.ndarray:
    if addr % min(nbytes, 16):
        raise SimulatorError(f"{what}: shared address {addr:#x} is not {min(nbytes, 16)}-byte aligned")
    return launch_state().shared.bytes_at(int(addr), nbytes, what)


def global_bytes(addr: int, nbytes: int, what: str) -> np.ndarray:
    if addr % min(nbytes, 16):
        raise SimulatorError(f"{what}: global address {addr:#x} is not {min(nbytes, 16)}-byte aligned")
    return launch_state().global_.bytes_at(int(addr), nbytes, what)


# ---------------------------------------------------------------------------------------
# Warp and warpgroup rendezvous
# ---------------------------------------------------------------------------------------
class _Rendezvous:
    """A reusable barrier of ``n`` threads, as ``threading.Barrier``: the last to arrive runs
    ``action``, then every thread goes on; a wait that times out breaks it for every thread.
    Each waiting thread sleeps on a lock of its own, which the last one releases, so no woken
    thread queues for a shared lock (``threading.Barrier`` wakes them all on one condition
    variable: about 1.7x the time a round of 32, measured on the CPU, perf-notes c3)."""

    def __init__(self, n, action):
        self.n, self.action = n, action
        self.mutex = threading.Lock()
        self.waiting = []
        self.broken = False

    def wait(self, timeout):
        with self.mutex:
            if self.broken:
                raise threading.BrokenBarrierError
            if len(self.waiting) + 1 == self.n:
                try:
                    self.action()
                finally:
                    self._release("ok")
                return
            mine = [threading.Lock(), None]  # the lock it sleeps on, the outcome it wakes to
            mine[0].acquire()
            self.waiting.append(mine)
        if not mine[0].acquire(timeout=timeout):
            with self.mutex:
                if mine[1] is None:  # not released while the timeout ran out: break it
                    self.broken = True
                    self.waiting.remove(mine)
                    mine[1] = "broken"
                    self._release("broken")
        if mine[1] == "broken":
            raise threading.BrokenBarrierError

    def _release(self, outcome):
        released, self.waiting = self.waiting, []
        for entry in released:
            entry[1] = outcome
            entry[0].release()


class _Warp:
    """The threads that execute one collective together: a warp, a warpgroup (128 threads,
    wgmma), or the lanes a member mask names (elect.sync)."""

    def __init__(self, nlanes):
        self.nlanes = nlanes
        self.inputs = [None] * nlanes
        self.names = [None] * nlanes
        self.results = None
        self.error = None
        self.barrier = _Rendezvous(nlanes, self._compute)
        self.spec = None
        self.members = None  # slot -> lane when a member mask picks the lanes

    def _compute(self):
        self.error = None
        names = set(self.names)
        if len(names) != 1:
            self.error = SimulatorError(
                f"lanes of one warp reached different warp-collective instructions: {sorted(names)}"
            )
            return
        try:
            self.results = self.spec.simulate(list(self.inputs))
        except Exception as e:  # reported to every lane
            self.error = e


def _members(spec, args, lane, nlanes):
    """Lanes named by the spec's member-mask input (its value in this lane's call)."""
    from .spec import Element

    k = 0
    for op in spec.inputs:
        if op.name == spec.sim_members:
            break
        k += 2 if isinstance(op, Element) else 1
    mask = int(args[k]) & 0xFFFFFFFF
    lanes = [i for i in range(nlanes) if mask >> i & 1]
    if lane not in lanes:
        raise SimulatorError(f"{spec.name}: lane {lane} executes it but is not in its member "
                             f"mask {mask:#010x}")
    if mask >> nlanes:
        raise SimulatorError(f"{spec.name}: member mask {mask:#010x} names lanes beyond the "
                             f"{nlanes} this warp has")
    return mask, lanes


def _group_of(spec, args, thread, manager):
    """(group, slot in it, group id) of the calling thread for the collective ``spec``."""
    bx, by, bz = manager._block_dim
    nthreads = bx * by * bz
    size = spec.sim_group
    gid = thread.thread_id // size
    nlanes = min(size, nthreads - gid * size)
    slot = thread.thread_id % size
    if nlanes != size and size > 32:
        raise SimulatorError(
            f"{spec.name}: warpgroup {gid} of block {tuple(thread.blockIdx)} has {nlanes} "
            f"threads, but this instruction needs all {size} (4 full warps)")
    key = (tuple(thread.blockIdx), size, gid)
    members = None
    if spec.sim_members:
        mask, members = _members(spec, args, slot, nlanes)
        key += (mask,)
        slot, nlanes = members.index(slot), len(members)
    st = launch_state()
    with st.lock:
        w = st.warps.get(key)
        if w is None:
            w = st.warps[key] = _Warp(nlanes)
            w.members = members
    return w, slot, gid


def warp_collective(spec, args):
    thread, manager = _sim_kernel()
    warp, lane, warp_id = _group_of(spec, args, thread, manager)
    what = "warpgroup" if spec.sim_group == 128 else "warp"
    warp.inputs[lane] = args
    warp.names[lane] = spec.name
    warp.spec = spec
    try:
        warp.barrier.wait(timeout=WARP_TIMEOUT_S)
    except threading.BrokenBarrierError:
        raise SimulatorError(
            f"{spec.name}: {what} {warp_id} of block {tuple(thread.blockIdx)} did not reach this "
            f"{what}-collective instruction with all {warp.nlanes} lanes within "
            f"{WARP_TIMEOUT_S:.0f} s (a lane exited early, diverged, or waits at a "
            "__syncthreads the others never reach)"
        ) from None
    if warp.error is not None:
        raise SimulatorError(f"{spec.name}: {warp.error}") from warp.error
    return warp.results[lane]


def current_thread_ids():
    """(block index, linear thread index in the block, threads per block) of the caller."""
    thread, manager = _sim_kernel()
    bx, by, bz = manager._block_dim
    return tuple(thread.blockIdx), thread.thread_id, bx * by * bz


# ---------------------------------------------------------------------------------------
# cp.async groups (per thread)
# ---------------------------------------------------------------------------------------
def _async_state(thread):
    st = getattr(thread, "_nbk_cp_async", None)
    if st is None or st[0] != _launch_key():
        st = (_launch_key(), [], [])  # (launch, open copies, committed groups)
        thread._nbk_cp_async = st
    return st


def cp_async_issue(dst_addr, src_addr, cp_size, src_size, what):
    """Snapshot the source now; the copy lands in shared memory when its group retires."""
    thread, _ = _sim_kernel()
    src_size = int(src_size)
    if not 0 <= src_size <= cp_size:
        raise SimulatorError(f"{what}: src_size must be in [0, {cp_size}], got {src_size}")
    if src_addr % cp_size:
        raise SimulatorError(f"{what}: global address {src_addr:#x} is not {cp_size}-byte aligned")
    data = np.zeros(cp_size, np.uint8)
    if src_size:  # only src_size bytes are read; the rest are zero-filled, not fetched
        data[:src_size] = launch_state().global_.bytes_at(int(src_addr), src_size, what)
    dst = shared_bytes(dst_addr, cp_size, what)
    _async_state(thread)[1].append((dst, data))


def cp_async_commit():
    thread, _ = _sim_kernel()
    _, open_copies, groups = _async_state(thread)
    groups.append(list(open_copies))
    open_copies.clear()


def cp_async_wait(n):
    thread, _ = _sim_kernel()
    _, _, groups = _async_state(thread)
    while len(groups) > n:
        for dst, data in groups.pop(0):
            dst[:] = data


def run(spec, args):
    """Run ``spec`` for the calling simulated thread."""
    if spec.simulate is None:
        raise SimulatorError(f"{spec.name} has no simulator implementation")
    args = tuple(args)
    from .spec import Const, Element

    k = 0
    for op in spec.inputs:
        width = 2 if isinstance(op, Element) else 1
        if k + width > len(args):
            raise SimulatorError(f"{spec.name}: too few arguments ({len(args)})")
        if isinstance(op, Const) and not op.check(int(args[k])):
            raise SimulatorError(f"{spec.name}: argument '{op.name}' must be one of "
                                 f"{op.allowed or (op.lo, op.hi)}, got {args[k]}")
        k += width
    if k != len(args):
        raise SimulatorError(f"{spec.name}: takes {k} arguments, got {len(args)}")
    if spec.warp_collective_sim:
        return warp_collective(spec, args)
    return spec.simulate(*args)


# ---------------------------------------------------------------------------------------
# Simulator shims: what numba's simulator rejects but tensor-core kernels need
# ---------------------------------------------------------------------------------------
def _install_simulator_shims():
    """Let simulated kernels declare ``alignment=`` and pass NumPy scalar types as dtype.

    ``cuda.shared.array(shape, dtype, alignment=16)`` is how a kernel makes ldmatrix rows
    and cp.async targets 16-byte aligned on the GPU; numba's simulator raises on the
    keyword. Here every shared array gets a 1024-byte-aligned virtual address anyway
    (see AddressSpace), so the shim checks the value and drops it. NumPy scalar classes
    (``np.uint16``) are turned into dtypes, which the simulator's dynamic shared memory
    path needs.
    """
    import sys
    import traceback

    from numba import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    def check(alignment, dtype):
        if alignment is not None and (alignment <= 0 or alignment & (alignment - 1)):
            raise SimulatorError(f"alignment must be a power of two, got {alignment}")
        if isinstance(dtype, type) and issubclass(dtype, np.generic):
            return np.dtype(dtype)
        if isinstance(dtype, types.Type):
            return numpy_support.as_dtype(dtype)
        return dtype

    def shared_array(self, shape, dtype, alignment=None):
        dtype = check(alignment, dtype)
        if shape == 0:
            return original_shared(self, 0, dtype)
        # numba keys static shared arrays by the line that declares them; that line is our
        # caller's, not this shim's (one key for every array would alias them all).
        caller = traceback.extract_stack(sys._getframe(1), limit=1)[-1][0:2]
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    def local_array(self, shape, dtype, alignment=None):
        return original_local(self, shape, check(alignment, dtype))

    original_shared = kernelapi.FakeCUDAShared.array
    original_local = kernelapi.FakeCUDALocal.array
    if getattr(original_shared, "_nbk_shim", False):
        return
    shared_array._nbk_shim = local_array._nbk_shim = True
    kernelapi.FakeCUDAShared.array = shared_array
    kernelapi.FakeCUDALocal.array = local_array




def _install_block_scheduler():
    """Replace the polling of numba's simulator with waiting.

    numba's simulator runs each thread of a block as a Python thread, while the launching thread
    loops over them (``BlockManager.run``) to release a ``syncthreads`` once every live thread
    waits there, and to notice exits and exceptions. That loop never sleeps: it holds the
    interpreter lock for whole switch intervals, so each block thread that wakes (after a warp
    collective, an mbarrier wait or a syncthreads) first waits for it. Measured on a simulated
    f64 GEMM, 9 million ``is_alive`` polls took most of a 100 s run (docs/perf-notes.md c3).

    Here the block threads tell the launching thread, through a condition variable, when they
    wait in ``syncthreads`` or end, and it sleeps in between. The rules are numba's own: a
    syncthreads is released when every thread still running waits in one; an exception in any
    thread aborts the others and is raised from the launch. Installed once, with the other shims.
    """
    from numba.cuda.simulator import kernel as K

    if getattr(K.BlockManager.run, "_nbk_shim", False):
        return

    class Thread(K.BlockThread):
        def __init__(self, *args):
            super().__init__(*args)
            self.nbk_done = False

        def run(self):
            try:
                super().run()  # numba's: records an exception in self.exception
            finally:
                cond = self._manager.nbk_cond
                with cond:
                    self.nbk_done = True
                    cond.notify()

        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            cond = self._manager.nbk_cond
            with cond:
                self.syncthreads_blocked = True
                cond.notify()
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

    def run(self, grid_point, *args):
        self.nbk_cond = cond = threading.Condition()

        def target():
            self._f(*args)

        threads = [Thread(target, self, grid_point, block_point, self._debug)
                   for block_point in np.ndindex(*self._block_dim)]
        with cond:  # the threads report only once this thread waits
            for t in threads:
                t.start()
            live = threads
            while True:
                for t in live:
                    if t.exception and not t.syncthreads_blocked:
                        for other in threads:  # as numba: abort the others, raise this one
                            other.abort = True
                            other.syncthreads_blocked = False
                            other.syncthreads_event.set()
                        raise t.exception[0].with_traceback(t.exception[1])
                live = [t for t in live if not t.nbk_done]
                if not live:
                    break
                if all(t.syncthreads_blocked for t in live):
                    for t in live:
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                cond.wait(1.0)  # woken by a thread that blocks or ends; the timeout is a guard
        for t in threads:
            t.join()
            if t.exception:
                raise t.exception[0].with_traceback(t.exception[1])

    run._nbk_shim = True
    K.BlockManager.run = run


def _simulator_enabled() -> bool:
    from numba.cuda import config

    return bool(config.ENABLE_CUDASIM)


if _simulator_enabled():
    _install_simulator_shims()
    _install_block_scheduler()
