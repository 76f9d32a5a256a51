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


class _Step:
    """One recorded launch: its argument block, which per-call value goes in which of its
    fields, and the launch with everything but the stream bound (:func:`launch.bind`)."""

    __slots__ = ("fn", "grid", "packed", "fields", "go")

    def __init__(self, fn, grid, block, smem, packed, fields):
        self.fn, self.grid = fn, grid  # what was launched (tests read them)
        self.packed = packed  # the block the first call launched (the driver copied it then)
        self.fields = tuple((packed.slots[i], name) for i, name in fields)  # (ctypes slot, name)
        self.go = launch.bind(fn, grid, block, smem, packed)


#: The expression of each per-call value in a generated replay (``Launcher._source``).
_VALUE = {"a": "pa", "b": "pb", "d": "pd", "alpha": "al", "w": "pw", "tm": "tm", "flags": "pf",
          "nonce": "nonce"}


class Launcher:
    """The launches of one recorded call, replayed by a function generated for it
    (:attr:`fire`, straight-line Python: perf-notes h4): check that a given ``out`` meets no
    operand (else return :data:`repeat.DECLINED`: the full path copies or refuses what the
    recorded launches cannot), allocate the output and workspaces, write the new pointers and
    scalars into the recorded argument blocks, launch.

    ``steps``: the recorded launches (:class:`_Step`); ``cast``: alpha's and beta's Python type
    in the kernel; ``out_shape``: the output allocated per call (None where the caller gives
    ``out``); ``has_c``; ``workspace``: (shape, dtype) of a split-K workspace; ``maps``: the
    sm90a tensor maps' :class:`~nbkernels.matmul.wgmma_kernel.MapCache` (their bytes are
    copied into the argument block: the kernel takes them by value); ``streamk``: the split
    tail's (workspace, flags) (shape, dtype) pairs; ``spans``: the byte spans of a, b, c and
    out from their first elements, where ``out`` was given (the key fixes their shapes and
    strides); ``c_like_out``: c has out's layout, so c may be out itself, element for element;
    ``ops``: the framework's ``(alloc, current, here, device)`` (:func:`repeat.framework_ops`;
    a call on another GPU than the current one runs its replay there: :func:`repeat.device_source`).

    The argument blocks are shared by every thread that repeats the call, so writing them and
    launching (the driver copies them at the launch) hold one lock: another thread's pointers
    cannot slip in between. It also guards the map cache, which is not thread-safe."""

    def __init__(self, steps, *, cast, out_shape, out_dtype, has_c, ops, workspace=None,
                 maps=None, streamk=None, spans=None, c_like_out=False):
        self.steps, self.cast, self.out_shape, self.out_dtype = steps, cast, out_shape, out_dtype
        self.has_c, self.workspace, self.maps, self.streamk = has_c, workspace, maps, streamk
        self.spans, self.c_like_out = spans, c_like_out
        self.lock = threading.Lock()
        ns = {"lock": self.lock, "alloc": ops[0], "current": ops[1], "cast": cast,
              "DECLINED": repeat.DECLINED, "ZERO": cast(0), "OUT": (out_shape, out_dtype),
              "WS": workspace, "SKW": streamk and streamk[0], "SKF": streamk and streamk[1],
              "new_nonce": run._nonce, "maps": maps}
        body = self._source(ns)
        self.fire, self.source = repeat.compile_replay(repeat.device_source(
            ns, ops, "def fire(ptrs, like, c, out, alpha, beta, stream):", body), ns)

    def _source(self, ns):
        lines = ["    pa, pb, pc, pd = ptrs"]
        if self.spans is not None:  # out given: it may meet no operand, but c element for element
            sa, sb, sc, sd = self.spans
            lines += repeat.guard_source("pd", "pa", *repeat.meet_bounds(sd, sa))
            lines += repeat.guard_source("pd", "pb", *repeat.meet_bounds(sd, sb))
            if self.has_c:
                lines += repeat.guard_source("pd", "pc", *repeat.meet_bounds(sd, sc),
                                             0 if self.c_like_out else None)
        allocs = []  # with stream=, from that stream's pool (repeat.alloc_source)
        if self.out_shape is not None:
            allocs.append(repeat.alloc_statement(ns, "out", "pd", "OUT"))
        if self.workspace is not None:  # stream-ordered pool allocations, freed on return
            allocs.append(repeat.alloc_statement(ns, "work", "pw", "WS"))
        if self.streamk is not None:  # split tail: partial sums, flags
            allocs += [repeat.alloc_statement(ns, "work", "pw", "SKW"),
                       repeat.alloc_statement(ns, "flags", "pf", "SKF")]
        lines += repeat.alloc_source(ns, allocs)
        if self.streamk is not None:  # this call's nonce
            lines.append("    nonce = int(new_nonce())")
        lines.append("    al = cast(alpha)")
        value = dict(_VALUE, c="pc" if self.has_c else "pd", beta="cast(beta)" if self.has_c
                     else "ZERO")
        # with maps: the maps of these a and b (cached by address), under the lock
        lines += repeat.launch_source(
            ns, [(step.go, [(slot, value[name]) for slot, name in step.fields])
                 for step in self.steps],
            ["tm = maps.host_ptr(pa, pb)"] if self.maps is not None else ())
        lines.append("    return out")
        return lines

    def __call__(self, ptrs, a, c, out, alpha, beta, stream):
        return self.fire(ptrs, a, c, out, alpha, beta, stream)


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
    kind, device = key[0][0], key[0][5]  # a's framework and device (repeat.desc)
    _FAST[key] = Launcher(
        steps, cast={"s8": int, "f64": float}.get(p.kind, float),
        out_shape=None if out_given else tuple(
            (p.batch, p.m, p.n) if (p.a.ndim == 3 or p.b.ndim == 3) else (p.m, p.n)),
        out_dtype=p.result_dtype, has_c=c is not None, ops=repeat.framework_ops(kind, device),
        workspace=getattr(run._LAST, "workspace", None) if p.splits > 1 else None,
        maps=getattr(run._LAST, "maps", None) if p.variant == "sm90a" else None,
        streamk=getattr(run._LAST, "streamk", None) if p.variant == "sm90a" else None,
        spans=tuple((0, 0) if v is None else arrays.span(v.shape, v.strides, v.dtype.itemsize)
                    for v in (p.a, p.b, p.c, p.out)) if out_given else None,
        c_like_out=bool(out_given and c is not None and p.c.shape == p.out.shape
                        and p.c.strides == p.out.strides))
