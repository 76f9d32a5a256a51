"""Host side of the row kernels: the caller's arrays as rows, checks, outputs, launches, and a
repeat-call path that replays recorded launches.

Arrays follow ``nbkernels.gemm``'s conventions: CuPy, NumPy, torch or any
``__cuda_array_interface__`` object in, the same type out. The last axis is the row; leading
axes that collapse to one row stride are used in place (rows with a stride are fine), anything
else (a non-unit last-axis stride, axes that do not collapse, negative strides) is copied once
into a contiguous array first, and an ``out`` of that kind receives the result by a copy.
Every check runs before anything is written, so a bad call leaves ``out`` untouched.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numba import cuda, types
from numba.cuda.cudadrv.driver import CudaAPIError

from .. import arrays, launch, repeat, runner
from ..arch import Arch, device_arch, limits as arch_limits
from ..errors import NbkernelsError
from ..smem import device_limits, planned_for
from . import config as cfgmod


class _Target(threading.local):
    arch = None  # validate --as: the arch to compile for instead of the GPU's (a class
    # default, so reading it unset raises nothing: getattr with a default costs ~0.4 us)


_TARGET = _Target()


@contextmanager
def target_arch(arch):
    """Compile the row kernels launched in this block for ``arch`` (with
    ``launch.driver_jit()``: PTX for an older arch, JIT-compiled by the driver), and plan
    their launches within an SM of ``arch`` (:func:`sm_limits`, ``smem.planned_for``)."""
    prev = _TARGET.arch
    _TARGET.arch = arch
    try:
        with planned_for(arch):  # and planned within the target's shared memory
            yield
    finally:
        _TARGET.arch = prev


KIND_OF = {np.dtype(np.float16): "f16", arrays.BF16: "bf16", np.dtype(np.float32): "f32"}
F32_BUF = types.Array(types.float32, 1, "C")
BYTES = types.Array(types.uint8, 1, "C")


@dataclass
class Rows:
    view: arrays.ArrayView  # of the array the kernel uses (the argument or its copy)
    rows: int
    n: int
    stride: int  # elements from one row to the next
    user: Any  # the caller's object
    temp: bool = False  # an output computed into a temporary and copied into ``user``
    #: rows that need not start 16-byte aligned, worked on in place by a shifted build
    #: (softmax_kernel.build's ``shifted``; Call.rows's ``shift``)
    shifted: bool = False

    @property
    def kind(self):
        return KIND_OF[self.view.dtype]

    def planned(self) -> "Rows":
        """The rows a layout is planned for: a shifted row is worked on from the 16-byte
        boundary before it, up to ``S - 1`` elements more (``S``: elements in 16 bytes)."""
        if not self.shifted:
            return self
        return replace(self, n=self.n + 16 // self.view.dtype.itemsize - 1)


def _row_stride(v):
    """The stride between rows if the leading axes collapse into one and the last axis has
    unit stride (or length 1); None if the array needs a copy."""
    if v.ndim and v.shape[-1] > 1 and v.strides[-1] != 1:
        return None
    stride, span = None, None
    for d in range(v.ndim - 2, -1, -1):
        if v.shape[d] == 1:
            continue
        if v.strides[d] < 0 or (span is not None and v.strides[d] != span):
            return None
        stride = v.strides[d] if stride is None else stride
        span = v.strides[d] * v.shape[d]
    return stride if stride is not None else max(v.shape[-1] if v.ndim else 1, 1)


def _aligned(v: arrays.ArrayView, rows: int, stride: int) -> bool:
    """Every row starts 16-byte aligned (the kernels' vector loads and stores need it)."""
    ptr = v.ptr if not v.host else v.obj.__array_interface__["data"][0]
    return ptr % 16 == 0 and (rows <= 1 or (stride * v.dtype.itemsize) % 16 == 0)


def _address(v: arrays.ArrayView) -> int:
    return v.obj.__array_interface__["data"][0] if v.host else v.ptr


def may_shift(config) -> bool:
    """Whether an op that has shifted builds may run misaligned rows in place: where it picks
    the layout itself, or the layout forced is sized from the row (a split one's chunks,
    NBKERNELS_ROW_VARIANT=regs's block): a shifted row needs up to ``S - 1`` elements more
    than ``n``, which a warp or block forced for ``n`` may not hold (padded copies then)."""
    if config is not None:
        return config.variant == "split"
    return os.environ.get("NBKERNELS_ROW_VARIANT") in (None, "", "split", "regs", "lanes")


def _heads_match(a: Rows, v: arrays.ArrayView, stride: int) -> bool:
    """Every row of ``v`` (rows of ``stride`` elements, ``a``'s count and item size) lies as
    many bytes past a 16-byte boundary as ``a``'s row of the same index."""
    esz = v.dtype.itemsize
    return (_address(a.view) - _address(v)) % 16 == 0 and (
        a.rows <= 1 or ((a.stride - stride) * esz) % 16 == 0)


def rows_meet(a: Rows, b: Rows) -> bool:
    """Whether any element of ``a``'s rows shares a byte with one of ``b``'s: exact for rows of
    one byte stride (two views of one array), else whether the address ranges intersect
    (``rows`` -1 marks an array whose rows have no single stride)."""
    va, vb = a.view, b.view
    if not (a.rows and b.rows and a.n and b.n) or va.host != vb.host or va.device != vb.device:
        return False
    if a.rows < 0 or b.rows < 0:
        return arrays.may_overlap(va, vb)
    la, lb = a.n * va.dtype.itemsize, b.n * vb.dtype.itemsize
    sa = a.stride * va.dtype.itemsize if a.rows > 1 else None
    sb = b.stride * vb.dtype.itemsize if b.rows > 1 else None
    if sa is not None and sb is not None and sa != sb:
        return arrays.may_overlap(va, vb)
    d = _address(vb) - _address(va)  # b's row j starts d + (j - i) * s after a's row i
    s = sa if sa is not None else sb
    if s is None or s == 0:
        return -lb < d < la
    lo = max(-(a.rows - 1), (-lb - d) // s + 1)  # rows i, j meet iff -lb < d + k * s < la
    hi = min(b.rows - 1, -((d - la) // s) - 1)  # for some k = j - i
    return lo <= hi


def same_rows(a: Rows, b: Rows) -> bool:
    """Whether ``a`` and ``b`` are the same elements at the same addresses (an in-place call)."""
    return (a.rows == b.rows and a.n == b.n and a.view.dtype.itemsize == b.view.dtype.itemsize
            and a.view.host == b.view.host and a.view.device == b.view.device
            and _address(a.view) == _address(b.view) and (a.rows <= 1 or a.stride == b.stride))


def _copy_rows(dst, src) -> bool:
    """Copy ``src`` into ``dst`` (CuPy arrays or torch tensors of one shape and dtype, on the
    current GPU, each of row-major rows: :func:`_row_stride`) with :mod:`.padcopy`'s kernel
    on the framework's current stream; False where that does not apply and nothing was copied
    (the framework's own copy then runs). Padded and misaligned rows (an odd 16-bit width) go
    through here: the frameworks' copies of such strided views moved ~0.2 TB/s on the H200
    (perf-notes r57, r58)."""
    try:
        d, s_ = arrays.as_view(dst, "out"), arrays.as_view(src, "x")
    except Exception:
        return False
    if d.host or s_.host or d.framework != s_.framework or d.framework not in ("cupy", "torch") \
            or d.device != s_.device or d.shape != s_.shape or d.dtype != s_.dtype or not d.ndim:
        return False
    ds, ss = _row_stride(d), _row_stride(s_)
    rows = int(np.prod(d.shape[:-1], dtype=np.int64))
    esz = d.dtype.itemsize
    width = int(d.shape[-1]) * esz
    if ds is None or ss is None or rows * width == 0 or arrays.current_device() != d.device:
        return False
    spitch, dpitch = (ss * esz, ds * esz) if rows > 1 else (width, width)
    if spitch < width or dpitch < width:  # rows that overlap: the framework's copy
        return False
    from . import padcopy

    padcopy.copy_rows(d, s_, rows, width, dpitch, spitch,
                      arrays.current_stream_handle(d.framework, d.device), device_arch())
    return True


def _padded(v: arrays.ArrayView, copy: bool = True, stream: int = 0):
    """A view of ``v``'s values (``copy``) in rows padded to whole 16-byte words, in a fresh
    (aligned) allocation of the same framework: the slower safe path for misaligned, strided
    or overlapping operands. ``stream``: as :func:`runner.empty`'s, for a numba result."""
    shape = tuple(v.shape)
    per = 16 // v.dtype.itemsize
    wide = shape[:-1] + (-(-max(shape[-1], 1) // per) * per,)
    obj = v.obj
    if v.framework == "torch":
        buf = obj.new_empty(wide)
    elif v.framework == "cupy":
        import cupy

        with cupy.cuda.Device(v.device):
            buf = cupy.empty(wide, v.dtype)
    elif v.host:
        buf = np.empty(wide, v.dtype)
        obj = np.asarray(obj)
    else:  # another CUDA-array-interface object: through the host
        host = cuda.as_cuda_array(obj).copy_to_host() if copy else None
        dt = v.dtype if v.dtype != arrays.BF16 else np.dtype(np.uint16)
        buf = np.zeros(wide, dt)
        if copy:
            buf[..., : shape[-1]] = host.view(dt) if host.dtype != dt else host
        d = cuda.to_device(buf)
        d = d.bind(cuda.external_stream(stream)) if stream else d
        return runner.DeviceView(d, shape, buf.strides, declared=v.dtype)
    view = buf[..., : shape[-1]]
    if copy and not _copy_rows(view, obj):
        view[...] = obj
    return view


class Call:
    """One call of a row operation: arguments checked and described, then launched."""

    def __init__(self, who: str, stream=None):
        self.who = who
        self.stream = stream
        self.sim = runner.simulated()
        self.first = None  # the first array argument's view: framework, device, side
        self.replayable = True
        self.launches = []  # (fn, grid, block, smem, packed, [(field, tag)])
        self.allocs = []  # (tag, shape, dtype) of outputs and workspaces made by this call
        self.inputs = []  # (name, Rows) of the array arguments read
        self.outputs = []  # (name, Rows) of the caller's outputs as given
        self._stream = None  # the raw stream of the launches, once asked (_launch_stream())
        self._awaited = False  # the producer streams waited for (handle())

    # --- arguments ------------------------------------------------------------------------
    def _view(self, obj, name):
        v = arrays.as_view(obj, f"{self.who}: {name}")
        if self.first is None:
            if v.host and not self.sim:
                raise NbkernelsError(f"{self.who}: internal: host arrays reach the launcher")
            if not v.host and self.sim:
                raise NbkernelsError(f"{self.who}: in numba's simulator, pass NumPy arrays")
            self.first = v
        elif v.host != self.first.host or v.device != self.first.device:
            where = lambda x: "host memory" if x.host else f"GPU {x.device}"  # noqa: E731
            raise NbkernelsError(f"{self.who}: {name} is in {where(v)}, expected the same place "
                                 f"as the first array argument ({where(self.first)})")
        return v

    def rows(self, obj, name, like: Rows | None = None, n: int | None = None,
             shift: bool = False) -> Rows:
        """A row-major operand: ``like``'s shape and dtype when given. ``shift``: rows that
        do not start 16-byte aligned come back ``shifted`` (worked on in place by a shifted
        build) rather than copied into padded rows."""
        r = self._rows(obj, name, like, n, shift)
        self.inputs.append((name, r))
        return r

    def _rows(self, obj, name, like: Rows | None = None, n: int | None = None,
              shift: bool | Rows = False) -> Rows:
        v = self._view(obj, name)
        if v.dtype not in KIND_OF:
            raise TypeError(f"{self.who}: {name} dtype must be float16, bfloat16 or float32, "
                            f"got {v.dtype}")
        if v.ndim == 0:
            raise NbkernelsError(f"{self.who}: {name} must have at least one axis, got a scalar")
        if like is not None:
            want = tuple(like.view.shape[:-1]) + (n if n is not None else like.n,)
            if tuple(v.shape) != want:
                raise NbkernelsError(f"{self.who}: {name}.shape must be {want}, got "
                                     f"{tuple(v.shape)}")
            if v.dtype != like.view.dtype:
                raise TypeError(f"{self.who}: {name} dtype must be {like.view.dtype} like x, "
                                f"got {v.dtype}; cast it first")
        stride = _row_stride(v)
        rows = int(np.prod(v.shape[:-1], dtype=np.int64))
        if stride is None or not _aligned(v, rows, stride):
            if shift and stride is not None and _address(v) % v.dtype.itemsize == 0 and (
                    shift is True or _heads_match(shift, v, stride)):
                return Rows(v, rows, int(v.shape[-1]), stride, obj, shifted=True)
            self.replayable = False  # the copy is per call: no replay
            v = arrays.as_view(_padded(v), name)
            stride = _row_stride(v)
        return Rows(v, rows, int(v.shape[-1]), stride, obj)

    def vector(self, obj, name, like: Rows) -> Rows:
        """A per-column vector (weight, bias): length n, x's dtype or float32."""
        v = self._view(obj, name)
        if v.ndim != 1 or v.shape[0] != like.n:
            raise NbkernelsError(f"{self.who}: {name} must be 1-D of length {like.n} (the last "
                                 f"axis of x), got shape {tuple(v.shape)}")
        if v.dtype not in (like.view.dtype, np.dtype(np.float32)):
            allowed = "float32" if like.view.dtype == np.float32 else \
                f"{like.view.dtype} (like x) or float32"
            raise TypeError(f"{self.who}: {name} dtype must be {allowed}, got {v.dtype}")
        if (v.shape[0] > 1 and v.strides[0] != 1) or not _aligned(v, 1, like.n):
            self.replayable = False
            v = arrays.as_view(_padded(v), name)
        r = Rows(v, 1, like.n, like.n, obj)
        self.inputs.append((name, r))
        return r

    def output(self, obj, name, like: Rows, n: int | None = None) -> Rows:
        """Where a result goes: ``obj`` (checked) or a new array like x's framework."""
        shape = tuple(like.view.shape[:-1]) + (n if n is not None else like.n,)
        if obj is None:
            made = runner.empty(self.first, shape, like.view.dtype, self._result_stream())
            v = arrays.as_view(made, name)
            if _aligned(v, like.rows, shape[-1]):
                self.allocs.append((name, shape, like.view.dtype))
                return Rows(v, like.rows, shape[-1], shape[-1], made)
            if like.shifted and _heads_match(like, v, shape[-1]):  # rows that lie as x's
                self.allocs.append((name, shape, like.view.dtype))
                return Rows(v, like.rows, shape[-1], shape[-1], made, shifted=True)
            # rows of n elements are not 16-byte multiples: compute into padded rows, then copy
            # them into the result (a numba or CUDA-array-interface result is the padded view
            # itself: those objects have no strided copy)
            self.replayable = False
            padded = _padded(v, copy=False, stream=self._result_stream())
            pv = arrays.as_view(padded, name)
            if v.framework in ("numba", "cai"):
                return Rows(pv, like.rows, shape[-1], _row_stride(pv), padded)
            return Rows(pv, like.rows, shape[-1], _row_stride(pv), made, True)
        out = self._rows(obj, name, like, n, like if like.shifted else False)
        mine = out if out.view.obj is obj else self._user_rows(obj)  # as given, not a copy
        arrays.check_writable(mine.view, name, self.who)
        for other, r in self.outputs:
            if rows_meet(mine, r):
                raise NbkernelsError(f"{self.who}: {name} shares memory with {other}, expected "
                                     f"separate arrays (both are written)")
        self.outputs.append((name, mine))
        if out.view.obj is not obj:  # misaligned or odd strides: a padded temporary
            out.temp = True
        elif (out.rows > 1 and out.stride < out.n) or any(  # rows overlap: writes would race
                rows_meet(out, r) and not same_rows(out, r) for _, r in self.inputs):
            # an out meeting an input other than element for element (x[1:] for x[:-1]) would
            # let blocks read rows that others already wrote: computed aside, then copied
            self.replayable = False
            pv = arrays.as_view(_padded(out.view, copy=False), name)
            out = Rows(pv, like.rows, shape[-1], _row_stride(pv), obj, True)
        return out

    def unshift(self, x: Rows, y: Rows) -> Rows:
        """``x``, or where it is shifted and ``y`` is not (an output whose rows do not lie as
        x's: a shifted build reads and writes with one offset a row), its padded copy."""
        if not x.shifted or y.shifted:
            return x
        self.replayable = False  # the copy is per call: no replay
        v = arrays.as_view(_padded(x.view), self.who)
        r = Rows(v, x.rows, x.n, _row_stride(v), x.user)
        self.inputs = [(n, r if q is x else q) for n, q in self.inputs]
        return r

    def _result_stream(self) -> int:
        """The raw stream a numba result is bound to (:func:`runner.empty`): the ``stream=``
        given, for numba and other array-interface inputs; 0 otherwise (their results take
        their framework's own stream, or, with no ``stream=``, the legacy default one)."""
        if self.sim or self.stream is None or self.first.framework not in ("numba", "cai"):
            return 0
        return self._launch_stream()

    def _launch_stream(self) -> int:
        if self._stream is None:
            self._stream = arrays.current_stream_handle(self.first.framework, self.first.device,
                                                        self.stream)
        return self._stream

    def _user_rows(self, obj) -> Rows:
        """The caller's array (checked already) as rows, before any copy, for the overlap
        checks; ``rows`` -1 where its rows have no single stride."""
        v = arrays.as_view(obj, self.who)
        stride = _row_stride(v)
        if stride is None:
            return Rows(v, -1, int(v.shape[-1]), 0, obj)
        return Rows(v, int(np.prod(v.shape[:-1], dtype=np.int64)), int(v.shape[-1]), stride,
                    obj)

    def workspace(self, count: int):
        """A float32 buffer from the caller's framework (stream-ordered pools) and its
        kernel argument; the caller keeps the buffer alive until the launches are queued."""
        buf = runner.empty(self.first, (count,), np.float32)
        self.allocs.append(("ws", (count,), np.dtype(np.float32)))
        return runner.flat(arrays.as_view(buf, "workspace"), np.float32), buf

    # --- configuration --------------------------------------------------------------------
    def arch(self):
        target = _TARGET.arch
        if self.sim:  # None: the sm_80 code path; a target picks another (tests run sm_75's)
            return target
        return target or device_arch()

    def config(self, r: Rows, forced: cfgmod.RowConfig | None, kernel) -> cfgmod.RowConfig:
        """The layout for ``r``: forced, or chosen for this GPU. A looping layout stages at
        least one buffer of ``kernel.nbk_row_bytes`` and the vectors (``nbk_vec_bytes``) per
        thread in shared memory; a split one a buffer."""
        loop_bytes = kernel.nbk_row_bytes + kernel.nbk_vec_bytes
        sms, max_smem = device_limits()
        max_smem -= cfgmod.STATIC_SMEM  # the per-block limit counts static shared memory too
        max_threads = 32
        while max_threads * 2 <= min(max_smem // loop_bytes, cfgmod.MAX_THREADS):
            max_threads *= 2
        cfg = self._config(r, forced, max_threads, sms,
                           getattr(kernel, "nbk_per_thread", cfgmod.PER_THREAD))
        if cfg.variant == "lanes":  # nothing staged either
            if getattr(kernel, "nbk_lanes", None) is None:
                raise NbkernelsError(f"{self.who}: the lanes layout (RowConfig variant 'lanes') "
                                     f"is built for softmax, rms_norm and layer_norm, at "
                                     f"most 32 elements a lane")
            return cfg
        if cfg.variant == "regs":  # nothing staged
            if getattr(kernel, "nbk_regs", None) is None:
                raise NbkernelsError(
                    f"{self.who}: the register-row layout (RowConfig variant 'regs') is built "
                    f"for 16-bit rows on sm_80+ (layer_norm, softmax, rms_norm without a "
                    f"residual), got {r.view.dtype} rows"
                    + ("" if cfgmod.for_arch(self.arch()).sm80 else f" on {self.arch()}")
                    + (" and a residual" if getattr(kernel, "nbk_resid", False) else ""))
            return cfg
        staged = kernel.nbk_row_bytes if cfg.variant == "split" else loop_bytes  # a thread's
        if cfg.threads * cfg.rows_per_block * staged > max_smem:
            raise NbkernelsError(f"config: {cfg.describe()} stages "
                                 f"{cfg.threads * cfg.rows_per_block * staged} B of shared "
                                 f"memory; this GPU allows {max_smem}")
        return cfg

    def _config(self, r: Rows, forced, max_threads, sms, per_thread) -> cfgmod.RowConfig:
        env = os.environ.get("NBKERNELS_ROW_VARIANT")
        if forced is None and env:
            if env not in cfgmod.VARIANTS:
                raise NbkernelsError(f"NBKERNELS_ROW_VARIANT: expected one of "
                                     f"{cfgmod.VARIANTS}, got {env!r}")
            forced = {"warp": cfgmod.RowConfig("warp", 32, cfgmod.WARP_ROWS_PER_BLOCK),
                      "block": cfgmod.RowConfig("block", cfgmod.MAX_THREADS),
                      "split": cfgmod.RowConfig("split", cfgmod.SPLIT_THREADS),
                      "regs": cfgmod.regs_config(r.n, (per_thread,)),
                      "lanes": lanes_config(r) or cfgmod.RowConfig("lanes", 32)}[env]
        if forced is not None:
            return cfgmod.with_chunks(forced, r.n, per_thread)
        return cfgmod.choose(r.n, r.rows, sms, max_threads, per_thread)

    # --- launching ------------------------------------------------------------------------
    def buf(self, r: Rows | None):
        """The kernel argument of an operand; for an absent one a distinct dummy (the
        simulator copies every array argument back after a launch, in argument order, so
        passing one buffer twice would let the unwritten copy overwrite the results)."""
        if r is None:
            return np.zeros(16, np.uint8) if self.sim else runner.DeviceBuf(runner.scratch(),
                                                                             16, 1)
        return runner.flat(r.view, np.uint8)

    def handle(self):
        """The raw stream of this call's launches. Asked first, it also orders that stream
        after the streams CUDA-array-interface arguments name (:func:`arrays.await_producers`):
        every argument is checked by then, and nothing has been launched yet."""
        if self.sim:
            return 0
        h = self._launch_stream()
        if not self._awaited:
            arrays.await_producers(h, [(n, r.view) for n, r in self.inputs + self.outputs])
            self._awaited = True
        return h

    def launch(self, kernel, sig, grid, block, args, tags, key_parts, smem=0):
        """Launch ``kernel``; ``tags`` name the arguments a repeat call changes: an array
        argument's name (its data pointer), ``(name, byte offset)`` (a view into it), or
        "eps" (a scalar)."""
        info = _KERNEL_INFO.get((id(kernel), str(self.arch()), self.first.device))
        static = info[1] if info else cfgmod.STATIC_SMEM
        bound = (getattr(kernel, "nbk_launch_bounds", None) or (1024,))[0]
        name = getattr(kernel, "py_func", kernel).__name__
        cfgmod.check_launch(name, grid, block, smem, static, bound, device_limits()[1])
        try:
            # the key parts name every argument of the kernel's build; the closing None (no
            # user epilogue) keeps the cubin on disk (runner.persisted): without it every
            # process compiled its row kernels again, 10-50 s each (perf-notes r17)
            rec = runner.launch_jit(kernel, sig, (grid, 1, 1), block, smem, self.handle(), args,
                                    (*key_parts, None), self.arch())
        except NbkernelsError as e:
            if "cuLaunchKernel" not in str(e):
                raise
            raise NbkernelsError(f"{name}: {e} (grid {grid} x block {block}, {smem} B dynamic "
                                 f"+ {static if info else 'unknown'} B static shared memory, "
                                 f"this GPU allows {device_limits()[1]} per block)") from e
        if rec is None:
            return None
        fields, pos = [], 0
        for t, a, tag in zip(sig, args, tags):
            if tag is not None:  # an array's data pointer is its 5th field
                fields.append((pos + 4 if isinstance(t, types.Array) else pos, tag))
            pos += launch.flat_params(t)
        self.launches.append(rec + (fields,))
        return rec

    def loop_launch(self, kernel, sig, cfg: cfgmod.RowConfig, items: int, args, tags,
                    key_parts):
        """Launch a kernel whose blocks loop over ``items`` row groups (or chunks): blocks,
        buffers and shared memory from :func:`config.plan_loop` for this kernel's registers
        on this GPU; ``args(buffers)`` gives the argument list. A kernel's registers are
        known after its first launch: that call is not recorded for replay, so the next one
        is planned with them."""
        # by the GPU's DRAM bandwidth per SM for short blocks (perf-notes r18), else measured
        # per kernel (r5) and, for block layouts, per block size (r11)
        by_threads = getattr(kernel, "nbk_loop_by_threads", None) or {}
        own = (cfgmod.by_block_size(by_threads, cfg.threads) if cfg.variant == "block"
               else None) or \
            getattr(kernel, "nbk_loop_default", None)
        mode = os.environ.get("NBKERNELS_ROWS_LOOP") or \
            (None if self.sim else cfgmod.layout_mode(cfg, sm_limits(), own)) or own
        if mode not in (None,) + cfgmod.LOOP_MODES:
            raise NbkernelsError(f"NBKERNELS_ROWS_LOOP: expected 0 (a block per row), 1, 2 or 4 "
                                 f"(blocks looping over rows with a ring of that many buffers) "
                                 f"or pairs (blocks of two rows in row order), got {mode!r}")
        shared = getattr(kernel, "nbk_vec_shared", False)
        if self.sim:  # no registers to read; two blocks exercise the loop, and where the
            # groups share the vectors, two groups a block of the block layout
            groups = 2 if shared and cfg.variant == "block" else 1
            grid, nbuf, smem = cfgmod.plan_loop(
                cfg if cfg.blocks else replace(cfg, blocks=2), items, 1, cfgmod.SmLimits(), 64,
                0, kernel.nbk_row_bytes, kernel.nbk_vec_bytes, device_limits()[1], mode,
                getattr(kernel, "nbk_max_buffers", 4), own, pairs_as(kernel, cfg), shared,
                groups, pairs_else=pairs_else(kernel, cfg))
            self.launch(kernel, sig, grid, cfg.threads * cfg.rows_per_block * groups,
                        args(nbuf), tags, key_parts, smem)
            return
        ikey = (id(kernel), str(self.arch()), self.first.device)
        info = _KERNEL_INFO.get(ikey)
        regs, static = info[:2] if info else (64, cfgmod.STATIC_SMEM)
        groups = 1
        if shared:
            groups = cfgmod.shared_groups(cfg, sm_limits(), regs, static, kernel.nbk_row_bytes,
                                          kernel.nbk_vec_bytes, device_limits()[1],
                                          barriers=barriers_of(kernel))
            if groups > 1 and not os.environ.get("NBKERNELS_ROWS_LOOP"):
                # blocks that loop over the rows with one buffer a group stage the shared
                # vectors once for the launch; the pairs staged them every four rows, and a
                # second buffer costs resident groups (perf-notes r35: 68 -> 79% of copy)
                mode = "1"
        block = cfg.threads * cfg.rows_per_block * groups
        grid, nbuf, smem = plan(kernel, cfg, items, regs, static, mode, own, groups)
        LAST_PLAN.update(who=self.who, blocks=grid, threads=block, buffers=nbuf, smem=smem,
                         regs=regs if info else None, layout=cfg.variant)
        rec = self.launch(kernel, sig, grid, block, args(nbuf), tags, key_parts, smem)
        if info is None and rec is not None:
            _KERNEL_INFO[ikey] = _function_info(rec[0][1]) + (barriers_of(kernel),)
            self.replayable = False

    def finish(self, *outs: Rows):
        """Copy temporaries into the caller's ``out`` arrays; the results to return."""
        res = []
        for r in outs:
            if r.temp:
                _copy_into(r.user, r.view.obj)
            res.append(r.user)
        return res[0] if len(res) == 1 else tuple(res)


def _copy_into(dst, src):
    if _copy_rows(dst, src):
        return
    if type(dst).__module__.startswith("torch"):
        dst.copy_(src)
    elif isinstance(dst, np.ndarray) or type(dst).__module__.startswith("cupy"):
        dst[...] = src
    else:
        raise NbkernelsError("out: an output that is not CuPy, NumPy or torch must have "
                             "row-major rows (unit last-axis stride)")


# --- NumPy / torch-CPU arrays with a GPU present ---------------------------------------------
def via_device(fn, arrays_in: dict, outs: dict, who: str | None = None, **kw):
    """Run ``fn`` on device copies of host arrays and copy the results back: into ``outs``
    where given, else as new arrays of the caller's type (NumPy, or torch for torch CPU).
    ``who``: the operation, named in errors."""
    def dev(x):
        if x is None:
            return None
        v = arrays.as_view(x, "array")
        h = v.obj if isinstance(v.obj, np.ndarray) else np.asarray(v.obj)
        bits = h.view(np.uint16) if h.dtype == arrays.BF16 else h
        d = cuda.to_device(np.ascontiguousarray(bits))
        return runner.DeviceView(d, declared=arrays.BF16) if h.dtype == arrays.BF16 else d

    for name, user in outs.items():  # before the work: a read-only out stays as it was
        if user is not None:
            arrays.check_writable(arrays.as_view(user, name), name, who)
    first = next(x for x in arrays_in.values() if x is not None)
    torch_cpu = type(first).__module__.startswith("torch")
    res = fn(**{k: dev(x) for k, x in arrays_in.items()}, **kw)
    single = not isinstance(res, tuple)
    results = []
    for r, (name, user) in zip((res,) if single else res, outs.items()):
        host = r.copy_to_host()
        dt = r.nbk_dtype if getattr(r, "nbk_dtype", None) is not None else host.dtype
        host = host.view(dt) if dt == arrays.BF16 else host
        if user is not None:  # checked before any out is written: a bad one stays untouched
            uv = arrays.as_view(user, name)
            if tuple(uv.shape) != host.shape or uv.dtype != host.dtype:
                raise NbkernelsError(f"{name}: expected shape {host.shape} and dtype "
                                     f"{host.dtype}, got {tuple(uv.shape)} {uv.dtype}")
        results.append((host, user))
    back = []
    for host, user in results:
        dt = host.dtype
        if torch_cpu or type(user).__module__.startswith("torch"):
            import torch

            host = (torch.from_numpy(host.view(np.int16)).view(torch.bfloat16)
                    if dt == arrays.BF16 else torch.from_numpy(host))
        if user is not None:
            _copy_into(user, host)
            host = user
        back.append(host)
    return back[0] if single else tuple(back)


def needs_device_copy(*xs) -> bool:
    """True when a host (NumPy or torch CPU) array is passed and kernels run on a GPU."""
    if runner.simulated():
        return False
    for x in xs:
        if x is not None and (isinstance(x, np.ndarray) or (
                type(x).__module__.startswith("torch") and not x.is_cuda)):
            if not cuda.is_available():
                raise NbkernelsError("no CUDA GPU found; set NUMBA_ENABLE_CUDASIM=1 to run the "
                                     "row kernels in numba's simulator")
            return True
    return False


# --- repeat calls -------------------------------------------------------------------------------
_FAST: dict = {}
_FAST_LOCK = threading.Lock()


_SWITCHES = repeat.EnvSwitches("NBKERNELS_ROW_VARIANT", "NBKERNELS_ROWS_LOOP",
                               "NBKERNELS_SPLIT_PASSES")


def key_function(who: str, names: tuple, scalars: tuple = ()):
    """``key(args, extra) -> (key, pointers)`` for one row op whose arrays are ``names`` (in
    the order its ``args`` tuple holds them, None where absent): a key for a call whose
    arrays are all CuPy arrays or CUDA torch tensors, and their data pointers in that order
    (None where absent); ``(None, None)`` for any other call. Generated once per op as
    straight-line code (perf-notes h9): each array's part is its :func:`repeat.desc` key
    (framework, dtype, shape, strides, pointer alignment, device) read inline, and every two
    pointers are compared, so an in-place call gets its own key and a replay aliases exactly
    what the recorded call aliased. ``extra``: what else the op's launch depends on (eps's
    type, a config); the row ops' switches and target arch join it. ``scalars``: the names
    of the scalars the op's replays take, in the order its calls pass them."""
    n = len(names)
    src = ["def key(args, extra):", f"    {''.join(f'a{i}, ' for i in range(n))}= args"]
    for i in range(n):
        a = f"a{i}"
        src += [f"    if {a} is None:", f"        k{i} = p{i} = None",
                f"    elif type({a}) in CUPY_TYPES:", f"        m = {a}.data",
                f"        p{i} = m.ptr",
                f"        k{i} = ({repeat.CUPY}, {a}.dtype, {a}.shape, {a}.strides, p{i} & 15, "
                "m.device_id)",
                f"    elif type({a}) in TORCH_TYPES and {a}.is_cuda:",
                f"        p{i} = {a}.data_ptr()",
                f"        k{i} = ({repeat.TORCH}, {a}.dtype, {a}.shape, {a}.stride(), p{i} & 15, "
                f"{a}.get_device())",
                "    else:", "        return other(args, extra)"]
    same = "".join(f"p{i} == p{j}, " for i in range(n) for j in range(i + 1, n))
    src.append(f"    return (WHO, {''.join(f'k{i}, ' for i in range(n))}{same}extra, switches(), "
               f"target.arch), ({''.join(f'p{i}, ' for i in range(n))})")
    cupy_types, torch_types = repeat.CUPY_TYPES, repeat.TORCH_TYPES  # the sets key reads

    def other(args, extra):
        """A call key did not read: an array of a type not classified yet (classified now,
        then read by key), or one that is neither a CuPy array nor a CUDA torch tensor."""
        for a in args:
            if a is None or type(a) in cupy_types:
                continue
            kind = repeat.kind_of(a) if type(a) not in torch_types else repeat.TORCH
            if kind == repeat.CUPY:
                cupy_types.add(type(a))
            elif kind == repeat.TORCH and a.is_cuda:
                torch_types.add(type(a))
            else:
                return None, None
        return key(args, extra)

    ns = {"CUPY_TYPES": cupy_types, "TORCH_TYPES": torch_types, "WHO": who,
          "switches": _SWITCHES.values, "target": _TARGET, "other": other}
    exec("\n".join(src) + "\n", ns)  # noqa: S102  (generated from the op's argument names)
    key = ns["key"]
    key.names, key.scalars, key.source = tuple(names), tuple(scalars), "\n".join(src)
    return key


def by_name(key_fn, args, ptrs):
    """The full path's ``(named, ptrs)`` of a call that did not replay: its arrays by name,
    and the data pointers of those given by name (None for a call no key covers)."""
    named = dict(zip(key_fn.names, args))
    if ptrs is None:
        return named, None
    return named, {k: p for k, p in zip(key_fn.names, ptrs) if p is not None}


class Replay:
    """The launches of one recorded call, replayed with new pointers and scalars by a function
    generated for it (:attr:`fire`, straight-line Python: perf-notes h4). Per call this is the
    whole Python work of a repeat call after its key (:func:`key_function`): check the
    outputs' overlap with the other arrays (:func:`_guards`), allocate the outputs, write the
    changed fields into the packed arguments, launch. ``ops``: the framework's ``(alloc,
    current, here, device)`` (:func:`repeat.framework_ops`; a call on another GPU than the
    current one runs there: :func:`repeat.device_source`). It is called with the arrays and
    their pointers as tuples in the order of ``named`` (the op's argument names) and the op's
    scalars as a tuple in the order ``scalars`` names them."""

    def __init__(self, call: Call, result_names, wrap, named, ptrs, ops, scalars=()):
        self.lock = threading.Lock()  # the argument blocks are shared by every thread
        made = {tag for tag, _, _ in call.allocs}
        ns = {"lock": self.lock, "alloc": ops[0], "current": ops[1], "DECLINED": repeat.DECLINED,
              "wrap": wrap}

        at = {name: k for k, name in enumerate(named)}  # the call's tuples hold them in order

        def value(tag):  # where a field's value comes from in this call
            return f"p_{tag}" if tag in made else f"ptrs[{at[tag]}]" if tag in ptrs else \
                f"scalars[{scalars.index(tag)}]"

        src = []
        for o, checks in _guards(named, ptrs, result_names):  # outs meeting arrays: declined
            for i, lo, hi, recorded in checks:
                src += repeat.guard_source(f"ptrs[{at[o]}]", f"ptrs[{at[i]}]", lo, hi, recorded)
        src.append("    like = args[0]")  # x or gate: never None
        allocs = []
        for k, (tag, shape, dtype) in enumerate(call.allocs):
            ns[f"A{k}"] = (shape, dtype)
            allocs.append(repeat.alloc_statement(ns, f"m_{tag}", f"p_{tag}", f"A{k}"))
        src += repeat.alloc_source(ns, allocs)  # with stream=: from that stream's pool
        launches = []  # written and launched (the driver copies them) under the lock
        for fn, grid, block, smem, packed, fields in call.launches:
            writes = []
            for i, t in fields:
                tag, off = (t, 0) if isinstance(t, str) else t
                writes.append((packed.slots[i], value(tag) + (f" + {off}" if off else "")))
            launches.append((launch.bind(fn, grid, block, smem, packed), writes))
        src += repeat.launch_source(ns, launches)
        res = [f"m_{n}" if n in made else f"args[{at[n]}]" for n in result_names]
        src.append(f"    return {res[0]}" if len(res) == 1 else
                   f"    return wrap([{', '.join(res)}])" if wrap else
                   f"    return ({', '.join(res)},)")
        self.fire, self.source = repeat.compile_replay(repeat.device_source(
            ns, ops, "def fire(args, ptrs, scalars, stream):", src), ns)

    def __call__(self, args, ptrs, scalars, stream):
        return self.fire(args, ptrs, scalars, stream)


def _guards(named: dict, ptrs: dict, result_names):
    """For each caller's output of a recorded call, ``(out, checks)``, a check per other array:
    ``(other, lo, hi, recorded)`` where the two meet iff ``lo < out - other < hi`` (pointers;
    their byte spans are fixed by the key's shapes and strides), and ``recorded`` is that
    difference in the recorded call, None where they did not meet. A repeat call whose out
    meets another array at the recorded difference is laid out as the recorded call (which the
    full path judged safe); at another one (``out=x[1:]`` for ``x[:-1]``) it must take the
    full path."""
    names = [n for n in named if named[n] is not None]
    outs = [n for n in result_names if named.get(n) is not None]
    if not outs:
        return ()
    spans = {}
    for n in names:  # CuPy arrays or torch tensors (the key read them): strides from desc
        kind, dtype, shape, strides = repeat.desc(named[n])[0][:4]
        spans[n] = arrays.span(shape, strides, 1 if kind == repeat.CUPY else dtype.itemsize)
    guards = []
    for o in outs:
        checks = []
        for i in names:
            if i == o or (i in outs and outs.index(i) < outs.index(o)):
                continue
            lo, hi = repeat.meet_bounds(spans[o], spans[i])
            d = ptrs[o] - ptrs[i]
            checks.append((i, lo, hi, d if lo < d < hi else None))
        guards.append((o, tuple(checks)))
    return tuple(guards)


def remember(key, call: Call, result_names, named: dict, ptrs: dict, wrap=None, scalars=()):
    """Keep ``call``'s launches as the replay of ``key`` (its arrays ``named``, their pointers
    ``ptrs`` by name, the op's scalar names ``scalars``: :func:`key_function`)."""
    if key is None or call.sim or not call.replayable or not call.launches:
        return
    with _FAST_LOCK:
        if len(_FAST) > 512:
            _FAST.clear()
        first = repeat.desc(next(iter(named.values())))[0]  # x (or gate): framework, device
        _FAST[key] = Replay(call, result_names, wrap, named, ptrs,
                            repeat.framework_ops(first[0], first[5]), scalars)


def wants_regs(call: Call, r: Rows, config, built: bool, auto_rows=None) -> bool:
    """Whether a call on rows ``r`` runs in the register-row layout: asked for (``config``'s
    variant, else env NBKERNELS_ROW_VARIANT), or, with no layout forced (neither of those nor
    NBKERNELS_ROWS_LOOP), rows of ``auto_rows`` (lengths lo-hi, default
    :data:`config.REGS_ROWS`; an op passes its own where it measured its staged layouts faster
    at some of those) on a GPU whose DRAM is wide (:func:`config.wide_dram`) where the op has
    the layout (``built``: 16-bit rows on sm_80+). Without a config the op then takes
    :func:`config.regs_config`'s block; a forced layout the op lacks raises in
    :meth:`Call.config`."""
    if config is not None:
        return config.variant == "regs"
    env = os.environ.get("NBKERNELS_ROW_VARIANT")
    if env:
        return env == "regs"
    if not built or call.sim or os.environ.get("NBKERNELS_ROWS_LOOP"):
        return False
    lo, hi = auto_rows or cfgmod.REGS_ROWS
    return lo <= r.n <= hi and cfgmod.wide_dram(sm_limits())


def wants_lanes(call: Call, r: Rows, config) -> bool:
    """Whether a call on rows ``r`` (their planned length) runs in the lanes layout (several
    short rows a warp, softmax's): asked for (``config``'s variant, else env
    NBKERNELS_ROW_VARIANT), or, with no layout forced (neither of those nor
    NBKERNELS_ROWS_LOOP), rows of at most :data:`config.LANES_ROWS` elements on a GPU (the
    simulator takes the staged layouts unless asked: they stay its default path)."""
    if config is not None:
        return config.variant == "lanes"
    env = os.environ.get("NBKERNELS_ROW_VARIANT")
    if env:
        return env == "lanes"
    if call.sim or os.environ.get("NBKERNELS_ROWS_LOOP"):
        return False
    return r.n <= cfgmod.LANES_ROWS


def lanes_config(r: Rows, groups_max: int | None = None) -> cfgmod.RowConfig | None:
    """:func:`config.lanes_config` for rows ``r`` (their planned length), at most
    ``groups_max`` slot groups a lane where fewer than 32 lanes hold the row (the op's;
    default :data:`config.LANES_GROUPS`, read at the call)."""
    return cfgmod.lanes_config(r.n, 16 // r.view.dtype.itemsize, groups_max=groups_max)


def narrow_per_thread(r: Rows, config, per_thread: int) -> int:
    """Elements a thread holds in the op's build for rows ``r``: ``per_thread`` (the op's
    own), or, where the op picks the layout by itself (no ``config``, no
    NBKERNELS_ROW_VARIANT) and the rows go on one warp or on a block of 64 threads, as many
    whole slot groups a thread as the row needs there (:func:`config.narrow_per_thread`,
    perf-notes r54, r55). A forced layout keeps the op's build."""
    if config is not None or os.environ.get("NBKERNELS_ROW_VARIANT"):
        return per_thread
    return cfgmod.narrow_per_thread(r.n, per_thread, 16 // r.view.dtype.itemsize)


def run_phases(call: Call, kernel, sig, cfg: cfgmod.RowConfig, rows: int, nstat: int, args,
               tags, key_parts):
    """Launch a row kernel in its layout: phase 0 (whole rows, blocks looping over them), or
    for a split layout phase 1 (``nstat`` partial statistics per chunk into a float32
    workspace) then phase 2 (combine, finish, store). ``args(phase, buffers, ws)`` gives the
    argument list of one launch."""
    if rows == 0:
        return
    if cfg.variant == "split":
        block = cfg.threads * cfg.rows_per_block
        smem = block * kernel.nbk_row_bytes  # one buffer, vectors read from global memory
        whole = getattr(kernel, "nbk_whole", None)  # the row staged whole (softmax's)
        if whole is not None and whole_fits(call, cfg, smem * cfg.chunks, rows):
            LAST_PLAN.update(who=call.who, blocks=rows, threads=block, buffers=cfg.chunks,
                             smem=smem * cfg.chunks, regs=None, layout="whole")
            call.launch(whole, sig, rows, block, args(3, 1, _unused(call)), tags + (None,),
                        key_parts + ("whole",), smem * cfg.chunks)
            return
        ws, _keep = call.workspace(rows * cfg.chunks * nstat)
        split = getattr(kernel, "nbk_split", None)  # a kernel of its own (softmax's)
        for phase in (1, 2):
            call.launch(split or kernel, sig, cfg.grid(rows), block, args(phase, 1, ws),
                        tags + ("ws",), key_parts + (("split",) if split else ()), smem)
        return
    unused = _unused(call)
    if cfg.variant == "lanes":  # several rows a warp, in registers (kernel.nbk_lanes)
        block = cfg.threads * cfg.rows_per_block
        LAST_PLAN.update(who=call.who, blocks=cfg.grid(rows), threads=block, buffers=0, smem=0,
                         regs=None, layout=f"lanes{cfg.threads}")
        call.launch(kernel.nbk_lanes, sig, cfg.grid(rows), block, args(0, 1, unused),
                    tags + (None,), key_parts + ("lanes",))
        return
    if cfg.variant == "regs":  # a block a row, the row in registers (kernel.nbk_regs)
        LAST_PLAN.update(who=call.who, blocks=rows, threads=cfg.threads, buffers=0, smem=0,
                         regs=None, layout="regs")
        call.launch(kernel.nbk_regs, sig, rows, cfg.threads, args(0, 1, unused),
                    tags + (None,), key_parts + ("regs",))
        return
    call.loop_launch(kernel, sig, cfg, cfg.grid(rows), lambda nbuf: args(0, nbuf, unused),
                     tags + (None,), key_parts)


def _unused(call: Call):
    """The float32 workspace argument of a launch that reads none."""
    return np.zeros(1, np.float32) if call.sim else runner.DeviceBuf(runner.scratch(), 1, 4)


def whole_fits(call: Call, cfg: cfgmod.RowConfig, smem: int, rows: int) -> bool:
    """Whether a split layout's rows run staged whole, a block a row (``nbk_whole``: x read
    once where the split phases read it twice; perf-notes r62): the row's chunks (``smem``
    bytes) fit one block's shared memory with two such blocks an SM (one alone leaves its SM
    idle while it waits for its row), and the rows fill the GPU's SMs twice over (fewer rows
    keep the split's blocks a chunk). NBKERNELS_SPLIT_PASSES=2 keeps the two passes."""
    if os.environ.get("NBKERNELS_SPLIT_PASSES") == "2":
        return False
    sms, max_smem = device_limits()
    lim = cfgmod.SmLimits() if call.sim else sm_limits()
    per_block = smem + cfgmod.STATIC_SMEM + lim.reserved_smem
    return smem <= max_smem and 2 * per_block <= lim.smem and (call.sim or rows >= 2 * sms)


# --- how many blocks stay resident ------------------------------------------------------------
#: (id(kernel), arch, device) -> (registers, static smem, CUfunction, named barriers)
_KERNEL_INFO: dict = {}
_SM_LIMITS: dict = {}
#: The last planned loop launch (benchmarks print it): who, blocks, threads, buffers, smem,
#: regs (None on a kernel's first launch, planned with a guess of 64).
LAST_PLAN: dict = {}


def plan(kernel, cfg: cfgmod.RowConfig, items: int, regs: int, static: int, mode=None,
         fallback=None, groups=1):
    """(blocks, buffers, dynamic shared memory) of a looping launch of ``kernel`` on the
    current GPU (:func:`config.plan_loop`); ``groups`` row groups a block where the kernel's
    groups share its vectors (``nbk_vec_shared``, :func:`config.shared_groups`)."""
    sms, max_smem = device_limits()
    return cfgmod.plan_loop(cfg, items, sms, sm_limits(), regs, static, kernel.nbk_row_bytes,
                            kernel.nbk_vec_bytes, max_smem, mode,
                            getattr(kernel, "nbk_max_buffers", 4), fallback,
                            pairs_as(kernel, cfg), getattr(kernel, "nbk_vec_shared", False),
                            groups, barriers_of(kernel), pairs_else(kernel, cfg))


def barriers_of(kernel) -> int:
    """Named barriers a block of ``kernel`` takes (its ``nbk_barriers``, checked against the
    assembler's count by ``nbkernels compile``; 1, ``bar.sync 0``, where it declares none)."""
    return getattr(kernel, "nbk_barriers", 1)


def pairs_as(kernel, cfg: cfgmod.RowConfig, table="nbk_pairs_by_threads"):
    """``(rows, buffers)``: the blocks of several rows ``kernel`` takes at ``cfg``'s block size
    whatever resident blocks they cost (its ``nbk_pairs_by_threads``, block sizes where that
    was measured faster: perf-notes r22, r24, r25); None where the residency rule decides."""
    if cfg.variant != "block":
        return None
    return cfgmod.by_block_size(getattr(kernel, table, {}), cfg.threads)


def pairs_else(kernel, cfg: cfgmod.RowConfig):
    """:func:`pairs_as` from the kernel's ``nbk_pairs_else_by_threads``: blocks of several
    rows taken only where the rule's pairs would cost resident blocks (perf-notes r47)."""
    return pairs_as(kernel, cfg, "nbk_pairs_else_by_threads")


def sm_limits() -> cfgmod.SmLimits:
    """The current device's per-SM limits (read once per device); under :func:`target_arch`
    none above the target's (an SM of the target holds no more than that)."""
    dev = cuda.get_current_device()
    lim = _SM_LIMITS.get(dev.id)
    if lim is None:
        lim = _SM_LIMITS[dev.id] = cfgmod.SmLimits(
            threads=int(dev.MAX_THREADS_PER_MULTIPROCESSOR),
            blocks=int(dev.MAX_BLOCKS_PER_MULTIPROCESSOR),
            registers=int(dev.MAX_REGISTERS_PER_MULTIPROCESSOR),
            smem=int(dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
            reserved_smem=int(dev.RESERVED_SHARED_MEMORY_PER_BLOCK),
            smem_granule=128 if dev.compute_capability[0] >= 8 else 256,
            dram_gbps_per_sm=dram_gbps_per_sm(dev))
    target = _TARGET.arch
    return lim if target is None else capped(lim, target)


def dram_gbps_per_sm(dev) -> float:
    """Peak DRAM bandwidth per SM in GB/s from the device's memory clock and bus width (two
    transfers a clock); 0 where the driver reports neither."""
    try:
        khz, bits = int(dev.MEMORY_CLOCK_RATE), int(dev.GLOBAL_MEMORY_BUS_WIDTH)
    except (AttributeError, CudaAPIError):  # an attribute this driver does not know
        return 0.0
    sms = int(dev.MULTIPROCESSOR_COUNT)
    return 2 * khz * 1e3 * bits / 8 / sms / 1e9 if khz > 0 and bits > 0 and sms else 0.0


def capped(lim: cfgmod.SmLimits, target) -> cfgmod.SmLimits:
    """``lim`` with no field above what an SM of ``target`` has (its system reservation and
    allocation granule are the target's)."""
    t = arch_limits(target)
    return replace(lim, threads=min(lim.threads, t.threads), blocks=min(lim.blocks, t.blocks),
                   registers=min(lim.registers, t.registers), smem=min(lim.smem, t.sm_smem),
                   reserved_smem=t.reserved_smem,
                   smem_granule=128 if Arch.parse(target).major >= 8 else 256)


def _function_info(f):
    """(registers per thread, static shared memory, f) of a loaded CUfunction; also asks for the
    largest shared-memory carveout, which :func:`config.resident_blocks` assumes (the row
    kernels read nothing through L1 that they reuse: rows arrive by cp.async.cg, vectors are
    staged in shared memory)."""
    from cuda.bindings import driver as drv

    from ..launch import _check

    A = drv.CUfunction_attribute
    regs = _check(drv.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_NUM_REGS, f), "registers")
    static = _check(drv.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                    "static shared memory")
    _check(drv.cuFuncSetAttribute(f, A.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
           "shared-memory carveout")
    return int(regs), int(static), f
