"""Measure the candidate tiles for a kind of call and remember the fastest, on disk.

``nbkernels.autotune(a, b)`` times every candidate TileConfig that fits (CUDA events, medians,
after a warm-up that compiles it) and stores the winner in ``<cache dir>/autotune.json`` under a
key of the GPU, driver, nbkernels version, dtype kind, operand layouts and the problem's size
class (powers of two of M, N, K). ``plan`` uses a stored winner whenever one exists; with
``NBKERNELS_AUTOTUNE=1`` a call with no stored winner tunes first.
"""
from __future__ import annotations

import json
import os
import statistics
import threading

from .. import __version__, launch
from ..errors import NbkernelsError
from . import config as cfgmod

_lock = threading.Lock()
_table = None


def _path():
    return launch.cache_dir() / "autotune.json"


def _load():
    global _table
    if _table is None:
        try:
            _table = json.loads(_path().read_text())
        except (OSError, ValueError):
            _table = {}
    return _table


def _size_class(n: int) -> int:
    return max(0, int(n) - 1).bit_length()  # ceil(log2 n)


_DEVICE_ID = {}


def _device_ident():
    from numba import cuda
    from numba.cuda.cudadrv.driver import driver

    dev = cuda.get_current_device()
    if dev.id not in _DEVICE_ID:
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        _DEVICE_ID[dev.id] = f"{name}|driver {driver.get_version()}|nbkernels {__version__}"
    return _DEVICE_ID[dev.id]


def key_for(kind, a_kmajor, b_kmajor, m, n, k) -> str:
    return (f"{_device_ident()}|{kind}|{'K' if a_kmajor else 'M'}{'K' if b_kmajor else 'N'}|"
            f"{_size_class(m)},{_size_class(n)},{_size_class(k)}")


def lookup(kind, a_kmajor, b_kmajor, m, n, k):
    """The stored winning TileConfig for this kind of call, or None."""
    entry = _load().get(key_for(kind, a_kmajor, b_kmajor, m, n, k))
    return cfgmod.TileConfig(*entry["tile"]) if entry else None


def autotune(a, b, c=None, *, candidates=None, reps=10, progress=True, **kwargs):
    """Time each candidate tile on this call's arrays; store and return the fastest. Runs on
    the arrays' GPU (made current for the tuning where another one is)."""
    from .. import arrays

    with arrays.on_device(arrays.device_of(a)):
        return _autotune(a, b, c, candidates, reps, progress, kwargs)


def _autotune(a, b, c, candidates, reps, progress, kwargs):
    from numba import cuda
    from numba.cuda import config

    from . import gemm, plan

    if config.ENABLE_CUDASIM or not cuda.is_available():
        raise NbkernelsError("autotune: needs a GPU (nothing to measure in the simulator)")
    kwargs.pop("tile", None)
    base = plan(a, b, c, **kwargs)
    if base.variant not in ("sm80",) or base.host:
        raise NbkernelsError(
            f"autotune: tunes the sm80 variant on device arrays; this call is {base.variant}"
            + (" on host arrays" if base.host else ""))
    _, max_smem = _limits()
    cands = [t for t in (candidates or cfgmod.candidates(base.kind))
             if t.smem_bytes(base.kind) * max(1, t.min_blocks) <= max_smem]
    if not cands:
        raise NbkernelsError("autotune: no candidate tile fits this device's shared memory")
    out = gemm(a, b, c, **kwargs)  # the result buffer every candidate writes
    times = {}
    bar = _progress(cands, progress)
    for tile in bar:
        fn = lambda: gemm(a, b, c, out=out, tile=tile, **kwargs)  # noqa: E731
        for _ in range(2):  # compile (or load) and warm up
            fn()
        cuda.synchronize()
        samples = []
        for _ in range(reps):
            s, e = cuda.event(), cuda.event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            samples.append(cuda.event_elapsed_time(s, e) * 1e-3)
        times[tile] = statistics.median(samples)
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(f"{tile.bm}x{tile.bn}: {times[tile] * 1e6:.0f} us")
    best = min(times, key=times.get)
    key = key_for(base.kind, base.a_kmajor, base.b_kmajor, base.m, base.n, base.k)
    with _lock:
        table = _load()
        table[key] = {"tile": list(best.key), "seconds": times[best],
                      "measured": {str(t): s for t, s in times.items()}}
        try:
            launch.cache_dir().mkdir(parents=True, exist_ok=True)
            tmp = _path().with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(table, indent=1))
            os.replace(tmp, _path())
        except OSError:
            pass  # the winner still serves this process
    return best


def _limits():
    from ..smem import device_limits

    return device_limits()


def _progress(items, enabled):
    if not enabled:
        return items
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a broken install still tunes, silently
        return items
    return tqdm(items, desc="nbkernels autotune", unit="tile", leave=False)
