"""Repeat calls of ``nbkernels.gemm`` with the same shapes, strides, dtypes and alignment.

The first call plans, compiles or loads the kernels, and launches; it leaves a launcher keyed
by everything the plan depended on. A repeat call rebuilds that key from the arrays' attributes
(CuPy or torch), writes the data pointers, alpha, beta and the stream into preallocated
argument blocks and launches: no planning, no numba type objects, no argument marshalling.
Split-K calls replay both launches with a fresh workspace from the framework's allocator;
split-tail (sm90a streamk) calls get a fresh workspace, fresh flags and a new nonce each.
Calls that needed copies, more than one batch chunk, epilogue extras or host arrays always take
the full path.
"""
from __future__ import annotations

import threading

from .. import arrays, launch, repeat
from . import run

_FAST: dict = {}
_MAX_ENTRIES = 512

# Field of each array's data pointer in a 1-D array argument (meminfo, parent, nitems, itemsize,
# data, shape, stride): the i-th array argument's pointer is field 7*i + 4.
_PTR = [7 * i + 4 for i in range(4)]


_SWITCHES = repeat.EnvSwitches("NBKERNELS_VARIANT", "NBKERNELS_TILE", "NBKERNELS_SPLITS")


def key_of(a, b, c, out, alpha, beta, precision, variant, tile):
    desc = repeat.desc
    da, db = desc(a), desc(b)
    if da is None or db is None:
        return None, None
    dc = desc(c) if c is not None else (None, 0)
    do = desc(out) if out is not None else (None, 0)
    if dc is None or do is None:
        return None, None
    key = (da[0], db[0], dc[0], do[0], type(alpha), type(beta), beta == 0, precision, variant,
           tile, _SWITCHES.values())
    return key, (da[1], db[1], dc[1], do[1])


# Per-call values, by position: the order of Launcher.__call__'s ``vals`` list.
_SRC = {"a": 0, "b": 1, "c": 2, "d": 3, "alpha": 4, "beta": 5, "w": 6, "tm": 7, "flags": 8,
        "nonce": 9}


class _Step:
    """One recorded launch: its argument block, where each call's values go in it, and the
    launch with everything but the stream bound (:func:`launch.bind`)."""

    __slots__ = ("fn", "grid", "packed", "fields", "go")

    def __init__(self, fn, grid, block, smem, packed, fields):
        self.fn, self.grid = fn, grid  # what was launched (tests read them)
        self.packed = packed  # the block the first call launched (the driver copied it then)
        # (ctypes slot, index into the call's values)
        self.fields = tuple((packed.slots[i], _SRC[name]) for i, name in fields)
        self.go = launch.bind(fn, grid, block, smem, packed)


class Launcher:
    """The launches of one recorded call. The argument blocks are shared by every thread that
    repeats the call, so writing them and launching (the driver copies them at the launch)
    hold a lock: another thread's pointers cannot slip in between."""

    __slots__ = ("steps", "cast", "out_shape", "out_dtype", "has_c", "workspace", "maps", "lock",
                 "spans", "c_like_out", "streamk")

    def __init__(self):
        self.streamk = None  # split tail: (shape, dtype) of its workspace and of its flags

    def aliased(self, ptrs) -> bool:
        """Whether a call with ``out=`` at these pointers has out sharing memory with a or b,
        or with c other than element for element: the full path then copies (or refuses)
        what the recorded launches cannot. ``spans``: the byte ranges of a, b, c and out from
        their first elements (the key fixes their shapes and strides)."""
        pa, pb, pc, pd = ptrs
        (alo, ahi), (blo, bhi), (clo, chi), (dlo, dhi) = self.spans
        d0, d1 = pd + dlo, pd + dhi
        return (pa + alo < d1 and d0 < pa + ahi or pb + blo < d1 and d0 < pb + bhi or
                self.has_c and pc + clo < d1 and d0 < pc + chi
                and not (self.c_like_out and pc == pd))

    def __call__(self, ptrs, a, c, out, alpha, beta, stream):
        pa, pb, pc, pd = ptrs
        if out is None:
            out, pd = repeat.alloc_ptr(a, self.out_shape, self.out_dtype)
        cast = self.cast
        vals = [pa, pb, pc if self.has_c else pd, pd, cast(alpha),
                cast(beta) if self.has_c else cast(0), 0, 0, 0, 0]
        if self.workspace is not None:  # stream-ordered pool allocation
            work, vals[6] = repeat.alloc_ptr(a, *self.workspace)
        if self.streamk is not None:  # split tail: partial sums, flags, this call's nonce
            (ws_shape, ws_dt), (fl_shape, fl_dt) = self.streamk
            work, vals[6] = repeat.alloc_ptr(a, ws_shape, ws_dt)
            flags, vals[8] = repeat.alloc_ptr(a, fl_shape, fl_dt)
            vals[9] = int(run._nonce())
        handle = repeat.stream_handle(a, stream)
        if self.maps is None:
            self._go(vals, handle)
        else:  # sm90a: the tensor maps of these a and b (cached by address), kept until queued
            with self.maps.lock:
                vals[7] = self.maps.device_ptr(pa, pb)
                self._go(vals, handle)
        return out

    def _go(self, vals, handle):
        with self.lock:
            for step in self.steps:
                for slot, i in step.fields:
                    slot.value = vals[i]
                step.go(handle)


def _fields(tag, n_scalars):
    """Where the per-call values go, by kernel: see the signatures in run.py."""
    if tag == "wgmma":  # maps (2-D array: 9 fields), C, D (7 each), 9 int64, alpha, beta
        return [(4, "tm"), (13, "c"), (20, "d"), (32, "alpha"), (33, "beta")]
    if tag == "wgmma-sk":  # ... 5 int32, then the workspace, the flags (7 each), the nonce
        return _fields("wgmma", n_scalars) + [(43, "w"), (50, "flags"), (53, "nonce")]
    alpha = 28 + n_scalars
    if tag in ("mma", "simt"):
        return list(zip(_PTR, "abcd")) + [(alpha, "alpha"), (alpha + 1, "beta")]
    if tag == "mma-swapped":  # D^T = B^T A^T: b's pointer in the kernel's A, a's in its B
        return list(zip(_PTR, "bacd")) + [(alpha, "alpha"), (alpha + 1, "beta")]
    if tag == "mma-partial":
        return list(zip(_PTR, ("a", "b", "w", "w"))) + [(alpha, "alpha")]
    if tag == "reduce":  # W, C, D, M, N, splits, 6 strides, beta
        return list(zip(_PTR[:3], ("w", "c", "d"))) + [(21 + 9, "beta")]
    return None


def remember(key, p, c, out_given):
    """After a full call: keep a launcher if its launches can be replayed."""
    launches = getattr(run._LAST, "launches", None)
    if (key is None or not launches or p.copies or p.batch > run._MAX_GRID_Y or p.host
            or p.k == 0 or p.m == 0 or p.n == 0):
        return
    n_scalars = 15 if p.variant == "simt" else 13
    steps = []
    for tag, fn, grid, block, smem, packed in launches:
        fields = _fields(tag, n_scalars)
        if fields is None:
            return
        steps.append(_Step(fn, grid, block, smem, packed, fields))
    if len(_FAST) >= _MAX_ENTRIES:
        _FAST.clear()
    lz = Launcher()
    lz.steps, lz.lock = steps, threading.Lock()
    lz.cast = {"s8": int, "f64": float}.get(p.kind, float)
    lz.out_shape = None if out_given else tuple(
        (p.batch, p.m, p.n) if (p.a.ndim == 3 or p.b.ndim == 3) else (p.m, p.n))
    lz.out_dtype = p.result_dtype
    lz.has_c = c is not None
    lz.workspace = getattr(run._LAST, "workspace", None) if p.splits > 1 else None
    lz.maps = getattr(run._LAST, "maps", None) if p.variant == "sm90a" else None
    lz.streamk = getattr(run._LAST, "streamk", None) if p.variant == "sm90a" else None
    lz.spans = tuple((0, 0) if v is None else arrays.span(v.shape, v.strides, v.dtype.itemsize)
                     for v in (p.a, p.b, p.c, p.out)) if out_given else None
    lz.c_like_out = bool(out_given and c is not None and p.c.shape == p.out.shape
                         and p.c.strides == p.out.strides)
    _FAST[key] = lz
