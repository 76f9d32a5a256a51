"""The Python of a repeat row call on the CPU, comparable between trees (perf-notes h9).

Runs the tree's own repeat path (its key, its recorded replay as ``remember`` builds it, its
``repeat.framework_ops`` and ``launch.bind``) on CuPy stand-ins: a fake ``cupy`` module whose
``ndarray``, device and stream queries and ``launchKernel`` are trivial Python functions, the
same in every tree, and arrays with CuPy's attributes. So two trees compare by the Python
they run around CuPy, not by CuPy. Prints us per call (best of 5 loops):
``PYTHONPATH=<tree> python tools/rows_host_ab.py``."""
import sys
import time
import types

import numpy as np


class Mem:
    def __init__(self, ptr):
        self.ptr, self.device_id = ptr, 0


class FakeCupy:
    def __init__(self, shape, ptr):
        self.shape, self.dtype = tuple(shape), np.dtype(np.float32)
        self.strides = tuple(int(np.prod(shape[i + 1:])) * 4 for i in range(len(shape)))
        self.data = Mem(ptr)


_STREAM = types.SimpleNamespace(ptr=0)
_MADE = FakeCupy((1, 4096), 1 << 28)


def _ndarray(shape, dtype):
    return _MADE


def _launch_kernel(*args):
    return None


def main():
    fake = types.SimpleNamespace(
        ndarray=FakeCupy, cuda=types.SimpleNamespace(
            runtime=types.SimpleNamespace(getDevice=lambda: 0), Device=None,
            get_current_stream=lambda: _STREAM,
            driver=types.SimpleNamespace(launchKernel=_launch_kernel)))
    fake.ndarray = _ndarray
    sys.modules["cupy"] = fake
    from nbkernels import launch, repeat
    from nbkernels.rows import host
    from nbkernels.rows import rms_norm_kernel as rk

    repeat._mods["cupy"] = fake
    repeat._KINDS[FakeCupy] = repeat.CUPY
    getattr(repeat, "CUPY_TYPES", set()).add(FakeCupy)
    packed = launch.PackedArgs([0] * 60 + [0.0], [launch.VOIDP] * 60 + [launch.F32])

    class Call:
        launches = [((None, 0x1234), (1, 1, 1), (512, 1, 1), 49152, packed,
                     [(4, "x"), (20, "weight"), (32, "out"), (60, "eps")])]
        allocs = []
        sim, replayable = False, True

    x, w, out = FakeCupy((1, 4096), 1 << 20), FakeCupy((4096,), 1 << 24), \
        FakeCupy((1, 4096), 1 << 26)
    res = {}
    for label, o in (("out=", out), ("allocating", None)):
        named = {"x": x, "weight": w, "residual": None, "out": o, "residual_out": None}
        call = Call()
        if o is None:
            call.launches = [call.launches[0][:5] + ([(4, "x"), (20, "weight"), (32, "out"),
                                                      (60, "eps")],)]
            call.allocs = [("out", (1, 4096), np.dtype(np.float32))]
        if hasattr(host, "key_function"):  # this session's tree
            key, ptrs = rk._KEY(tuple(named.values()), (float, None))
            host.remember(key, call, ("out",), *host.by_name(rk._KEY, tuple(named.values()),
                                                             ptrs), scalars=("eps",))
        else:
            key, ptrs = getattr(host, "fast_key")("rms_norm", named, (float, None))
            host.remember(key, call, ("out",), named, ptrs)
        got = rk.rms_norm(x, w, out=o)
        assert got is (o if o is not None else _MADE), got
        assert [packed.slots[i].value for i in (4, 20, 32)] == [1 << 20, 1 << 24,
                                                                 (1 << 26) if o else 1 << 28]
        fn = (lambda: rk.rms_norm(x, w, out=out)) if o is not None else \
            (lambda: rk.rms_norm(x, w))
        for _ in range(2000):
            fn()
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(100000):
                fn()
            best = min(best, (time.perf_counter() - t0) / 100000 * 1e6)
        res[label] = best
    print("rms_norm repeat call, Python only: " +
          "; ".join(f"{k} {v:.3f} us" for k, v in res.items()))


if __name__ == "__main__":
    main()
