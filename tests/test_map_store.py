"""The device store of tensor maps (nbkernels.tensormap.MapStore), on a recording fake driver:
entries are written once, whole slabs are freed only after a device-wide wait, and a launch
holding the store's lock keeps another thread's eviction out until it is queued."""
import threading

import numpy as np
import pytest

from nbkernels import tensormap
from nbkernels.errors import NbkernelsError


class FakeDriver:
    """Device memory as a dict of bytearrays; every call is logged in order."""

    def __init__(self):
        self.log, self.mem, self.next = [], {}, 0x10000

    def alloc(self, nbytes):
        dev, self.next = self.next, self.next + 0x10000
        self.mem[dev] = bytearray(nbytes)
        self.log.append(("alloc", dev))
        return dev, np.zeros(nbytes, np.uint8)

    def _slab(self, addr):
        return next((d, m) for d, m in self.mem.items() if d <= addr < d + len(m))

    def copy(self, dst, host):
        d, m = self._slab(dst)
        m[dst - d:dst - d + host.nbytes] = host.tobytes()
        self.log.append(("copy", dst))

    def free(self, dev):
        self.log.append(("sync+free", dev))
        del self.mem[dev]

    def read(self, addr, n):
        d, m = self._slab(addr)
        return bytes(m[addr - d:addr - d + n])


def entry(i, n=16):
    return np.full(n, i % 251, np.uint8)


def test_an_entry_is_written_once_and_found_again():
    drv = FakeDriver()
    s = tensormap.MapStore(0, 16, slots=4, slabs=2, driver=drv)
    calls = []
    p = s.address("k", lambda: calls.append(1) or entry(7))
    assert s.address("k", lambda: calls.append(1) or entry(8)) == p
    assert calls == [1] and drv.read(p, 16) == entry(7).tobytes()
    assert [e[0] for e in drv.log] == ["alloc", "copy"]


@pytest.mark.parametrize("slots,slabs", [(1, 1), (4, 2), (3, 3)])
def test_past_the_bound_the_oldest_slab_goes_whole_after_a_wait(slots, slabs):
    drv = FakeDriver()
    s = tensormap.MapStore(0, 16, slots=slots, slabs=slabs, driver=drv)
    n = slots * slabs
    ptrs = [s.address(i, lambda i=i: entry(i)) for i in range(n)]
    assert len(set(ptrs)) == n and s.evictions == 0
    assert not any(e[0] == "sync+free" for e in drv.log)
    for i, p in enumerate(ptrs):  # every entry holds its own bytes, none was rewritten
        assert drv.read(p, 16) == entry(i).tobytes()
    s.address(n, lambda: entry(n))  # one more: the first slab (entries 0..slots-1) goes
    frees = [e for e in drv.log if e[0] == "sync+free"]
    assert len(frees) == 1 and s.evictions == 1
    assert all(i not in s.where for i in range(slots))
    assert all(i in s.where for i in range(slots, n + 1))
    # no address is written twice before its slab is freed
    copies = [e[1] for e in drv.log if e[0] == "copy"]
    assert len(copies) == len(set(copies))


def test_an_entry_of_the_wrong_size_is_refused():
    s = tensormap.MapStore(0, 16, driver=FakeDriver())
    with pytest.raises(NbkernelsError, match="16 bytes, got 8"):
        s.address("k", lambda: np.zeros(8, np.uint8))


def test_an_eviction_waits_for_a_launch_holding_the_lock():
    drv = FakeDriver()
    s = tensormap.MapStore(0, 16, slots=1, slabs=1, driver=drv)
    with s.lock:  # as a launch does: look up, then queue the launch, then release
        p = s.address("a", lambda: entry(1))
        t = threading.Thread(target=lambda: s.address("b", lambda: entry(2)))
        t.start()
        t.join(0.2)
        assert t.is_alive()  # the other thread's miss must evict "a": it waits
        assert drv.read(p, 16) == entry(1).tobytes()
        drv.log.append(("launch", p))
    t.join(5)
    assert not t.is_alive()
    kinds = [e[0] for e in drv.log]
    assert kinds.index("launch") < kinds.index("sync+free")


def test_equal_geometries_intern_to_one_small_int():
    s = tensormap.MapStore(0, 16, driver=FakeDriver())
    g1 = ((np.dtype(np.uint16), (64, 32), (64, 2), (64, 32)),)
    g2 = ((np.dtype(np.uint16), (64, 32), (64, 2), (64, 32)),)
    g3 = ((np.dtype(np.uint16), (64, 64), (128, 2), (64, 32)),)
    assert s.intern(g1) == s.intern(g2) != s.intern(g3)
