"""TMA tensor maps, encoded on the host (``cuTensorMapEncodeTiled`` through cuda-bindings).

A tensor map is the 128-byte descriptor that ``cp.async.bulk.tensor`` (``tma_load_2d`` ...)
reads: the global tensor's address, shape and strides, the box one copy moves, and the
shared-memory swizzle. Shapes, strides and boxes here are in NumPy order (outermost axis
first, strides in bytes); the kernel's coordinates are in PTX order, innermost first
(``tma_load_2d(dst, tmaps, (i, 0), x, y, mbar)`` with ``x`` the column, ``y`` the row).

How the map reaches the kernel: CUDA C passes it by value as a ``const __grid_constant__``
kernel parameter. numba-cuda can neither mark a parameter grid-constant nor pass a 128-byte,
64-byte-aligned aggregate by value (a record argument becomes a pointer to a device copy, a
tuple becomes separate scalar parameters). A kernel launched by numba's dispatcher therefore
takes its maps in global memory, which the PTX ISA also allows for the tensor-map operand (a
generic address of a map in ``.param``, ``.const`` or ``.global`` space): :func:`to_device`
copies them into one ``uint8[k, 128]`` device array (each row 64-byte aligned), and the kernel
names a map by element, ``(tmaps, (i, 0))``. A map written by the host that way must be
acquired once per block before its first use, ``fence_proxy_tensormap_acquire(tmaps, (i,
0))`` (CUDA Programming Guide, "Using TMA to transfer multi-dimensional arrays").

nbkernels' own kernels, launched from cubins (:mod:`nbkernels.launch`), get the
``__grid_constant__`` form back: the same ``uint8[k, 128]`` argument declared by value
(``nbk_by_value``), its PTX rewritten so that the bytes travel in the launch's parameters
(:func:`nbkernels.launch.by_value_ptx`). The Hopper GEMM takes its maps that way: a call on
new arrays encodes maps on the host and copies nothing to the device.

In numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) there is no driver: :func:`tensor_map`
records the parameters and the simulated array under a private 128-byte key, which the
simulated TMA instructions look up.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import NbkernelsError

MAP_BYTES = 128
_SWIZZLES = (0, 32, 64, 128)
_L2 = (0, 64, 128, 256)

# element dtype -> CUtensorMapDataType name (8-bit types move as bytes)
_DTYPES = {
    np.dtype(np.uint8): "UINT8", np.dtype(np.int8): "UINT8",
    np.dtype(ml_dtypes.float8_e4m3fn): "UINT8", np.dtype(ml_dtypes.float8_e5m2): "UINT8",
    np.dtype(np.uint16): "UINT16", np.dtype(np.int16): "UINT16",
    np.dtype(np.float16): "FLOAT16", np.dtype(ml_dtypes.bfloat16): "BFLOAT16",
    np.dtype(np.uint32): "UINT32", np.dtype(np.int32): "INT32",
    np.dtype(np.float32): "FLOAT32", np.dtype(np.uint64): "UINT64",
    np.dtype(np.int64): "INT64", np.dtype(np.float64): "FLOAT64",
}


@dataclass(frozen=True)
class TensorMap:
    """An encoded tensor map and the parameters it was encoded from (NumPy order)."""

    bytes: np.ndarray  # uint8[128], what the kernel reads
    dtype: np.dtype
    shape: tuple
    strides: tuple  # bytes
    box: tuple
    swizzle: int  # bytes: 0, 32, 64, 128
    oob_nan: bool
    array: object = None  # simulator only: the array the map describes
    element_strides: tuple = ()

    @property
    def box_bytes(self) -> int:
        """Bytes one copy of a box moves (the ``tx`` to announce to its mbarrier)."""
        return int(np.prod(self.box)) * self.dtype.itemsize


_registry: dict = {}  # bytes -> TensorMap, for the simulator
_ids = itertools.count(1)
_lock = threading.Lock()


def lookup(blob: bytes) -> TensorMap | None:
    """The map whose 128 bytes are ``blob`` (maps encoded in this process's simulator), else
    None."""
    return _registry.get(bytes(blob))


def _fail(msg):
    raise NbkernelsError(f"encode_tiled: {msg}")


def _check(dtype, shape, strides, box, swizzle, element_strides, l2_promotion):
    rank = len(shape)
    if not 1 <= rank <= 5:
        _fail(f"rank must be 1 to 5, got shape {shape}")
    if dtype not in _DTYPES:
        _fail(f"dtype must be one of {sorted(str(d) for d in _DTYPES)}, got {dtype}")
    if len(strides) != rank or len(box) != rank or len(element_strides) != rank:
        _fail(f"shape {shape}, strides {strides}, box {box} and element_strides "
              f"{element_strides} must have the same length")
    esize = dtype.itemsize
    if any(not 1 <= d <= 2**32 for d in shape):
        _fail(f"every dimension must be in [1, 2^32], got shape {shape}")
    if strides[-1] != esize:
        _fail(f"the innermost axis must be contiguous (stride {esize} B), got strides {strides}")
    if any(s % 16 or not 0 < s < 2**40 for s in strides[:-1]):
        _fail(f"outer strides must be multiples of 16 bytes below 2^40, got {strides}")
    if any(not 1 <= b <= 256 for b in box):
        _fail(f"every box dimension must be in [1, 256], got box {box}")
    inner = box[-1] * esize
    if inner % 16:
        _fail(f"the box's inner extent must be a multiple of 16 bytes, got {box[-1]} x {esize} B")
    if swizzle not in _SWIZZLES:
        _fail(f"swizzle must be one of {_SWIZZLES} (bytes), got {swizzle!r}")
    if swizzle and inner > swizzle:
        _fail(f"with a {swizzle}-byte swizzle the box's inner extent must be at most "
              f"{swizzle} bytes, got {inner}")
    if any(not 1 <= e <= 8 for e in element_strides):
        _fail(f"element strides must be in [1, 8], got {element_strides}")
    if l2_promotion not in _L2:
        _fail(f"l2_promotion must be one of {_L2} (bytes), got {l2_promotion!r}")


def encode_tiled(ptr: int, dtype, shape, strides, box, *, swizzle: int = 128,
                 element_strides=None, l2_promotion: int = 256, oob_nan: bool = False,
                 array=None) -> TensorMap:
    """Encode a tiled tensor map for the device tensor at ``ptr`` (NumPy-order parameters).

    ``strides`` are in bytes, the innermost one equal to the element size. Out-of-bounds
    box elements read as zero (``oob_nan=True``: as NaN, float types only) and are not
    written by stores. ``array`` is the device array itself; only the simulator needs it.
    """
    dtype = np.dtype(dtype)
    shape, strides, box = (tuple(int(v) for v in x) for x in (shape, strides, box))
    element_strides = tuple(int(v) for v in (element_strides or (1,) * len(shape)))
    _check(dtype, shape, strides, box, swizzle, element_strides, l2_promotion)
    if int(ptr) % 16:
        _fail(f"the global address must be 16-byte aligned, got {int(ptr):#x}")
    from numba.cuda import config

    if config.ENABLE_CUDASIM:
        if array is None:
            _fail("in the simulator a tensor map needs the array itself (use tensor_map(array))")
        blob = np.zeros(MAP_BYTES, np.uint8)
        blob[:8] = np.frombuffer(b"NBKTMAP1", np.uint8)
        with _lock:
            blob[8:16] = np.frombuffer(np.uint64(next(_ids)).tobytes(), np.uint8)
    else:
        blob = _driver_encode(int(ptr), dtype, shape, strides, box, swizzle, element_strides,
                              l2_promotion, oob_nan)
    tm = TensorMap(blob, dtype, shape, strides, box, swizzle, oob_nan, array, element_strides)
    if config.ENABLE_CUDASIM:  # only the simulator looks maps up (on a GPU the registry
        with _lock:             # grew by one map per new operand address, for good)
            _registry[blob.tobytes()] = tm
    return tm


def driver_args(dtype, shape, strides, box, swizzle, element_strides, l2, oob_nan, ptr):
    """The arguments of ``cuTensorMapEncodeTiled`` for these (checked, NumPy-order) parameters.

    The driver takes dimensions innermost first and the strides of all but the innermost;
    cuda-bindings wants its own integer types in the lists (plain ints raise TypeError).
    """
    from cuda.bindings import driver as drv

    swz = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}[swizzle]
    l2name = {0: "NONE", 64: "L2_64B", 128: "L2_128B", 256: "L2_256B"}[l2]
    fill = "NAN_REQUEST_ZERO_FMA" if oob_nan else "NONE"
    return (getattr(drv.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{_DTYPES[dtype]}"),
            len(shape), ptr,
            [drv.cuuint64_t(v) for v in reversed(shape)],
            [drv.cuuint64_t(v) for v in reversed(strides[:-1])],
            [drv.cuuint32_t(v) for v in reversed(box)],
            [drv.cuuint32_t(v) for v in reversed(element_strides)],
            drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(drv.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{swz}"),
            getattr(drv.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_{l2name}"),
            getattr(drv.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{fill}"))


def encoder(dtype, shape, strides, box, *, swizzle: int = 128, element_strides=None,
            l2_promotion: int = 256, oob_nan: bool = False):
    """``encode(ptr) -> uint8[128]`` (read-only): the driver's map for these parameters at
    each address, on a GPU. :func:`encode_tiled` encodes through it; callers that encode one
    geometry at many addresses (the GEMM's map cache, on every call with a new operand) keep
    it, so that the parameters are checked and converted to the driver's types once and a call
    is the driver's encode and a 128-byte copy (4.4 us, against ~57 us for ``encode_tiled``
    made afresh each time on an H100's host, perf-notes s15)."""
    from ctypes import string_at

    from cuda.bindings import driver as drv

    dtype = np.dtype(dtype)
    shape, strides, box = (tuple(int(v) for v in x) for x in (shape, strides, box))
    element_strides = tuple(int(v) for v in (element_strides or (1,) * len(shape)))
    _check(dtype, shape, strides, box, swizzle, element_strides, l2_promotion)
    args = driver_args(dtype, shape, strides, box, swizzle, element_strides, l2_promotion,
                       oob_nan, 0)
    head, tail = args[:2], args[3:]
    encode_tiled_ = drv.cuTensorMapEncodeTiled
    ok = drv.CUresult.CUDA_SUCCESS

    def encode(ptr: int) -> np.ndarray:
        if ptr % 16:
            _fail(f"the global address must be 16-byte aligned, got {int(ptr):#x}")
        err, tmap = encode_tiled_(*head, ptr, *tail)
        if err != ok:
            _, msg = drv.cuGetErrorString(err)
            _fail(f"cuTensorMapEncodeTiled failed: {err.name}: {msg.decode() if msg else ''} "
                  f"(shape {shape}, strides {strides}, box {box}, swizzle {swizzle}, dtype "
                  f"{dtype})")
        # the struct's 128 bytes at once (``opaque`` builds 16 Python objects: ~4x slower)
        return np.frombuffer(string_at(tmap.getPtr(), MAP_BYTES), np.uint8)

    return encode


def _driver_encode(ptr, dtype, shape, strides, box, swizzle, element_strides, l2, oob_nan):
    from numba import cuda

    cuda.current_context()  # the driver is initialised once a context exists
    return encoder(dtype, shape, strides, box, swizzle=swizzle, element_strides=element_strides,
                   l2_promotion=l2, oob_nan=oob_nan)(ptr).copy()


def _device_view(array):
    """(pointer, dtype, shape, strides) of a device array (CUDA array interface)."""
    cai = getattr(array, "__cuda_array_interface__", None)
    from numba.cuda import config

    if config.ENABLE_CUDASIM:
        from .intrinsics.sim import host_array

        if isinstance(array, np.ndarray):  # a kernel would see a copy of it, not it
            _fail("in the simulator pass a device array (cuda.to_device(x)), not a NumPy array")
        host = host_array(array)
        return host.__array_interface__["data"][0], host.dtype, host.shape, host.strides
    if cai is None:
        _fail(f"expected a device array (CUDA array interface), got {type(array).__name__}")
    dtype = np.dtype(cai["typestr"])
    if dtype.kind == "V" and dtype.itemsize == 2:  # torch writes bf16 as '<V2'
        dtype = np.dtype(ml_dtypes.bfloat16)
    shape = tuple(cai["shape"])
    strides = cai.get("strides") or tuple(
        int(np.prod(shape[i + 1:])) * dtype.itemsize for i in range(len(shape)))
    return cai["data"][0], dtype, shape, tuple(strides)


def tensor_map(array, box, *, dtype=None, swizzle: int = 128, **kw) -> TensorMap:
    """:func:`encode_tiled` for a whole device array (numba, CuPy, torch), in NumPy order.

    ``dtype`` overrides the array's (a bf16 or fp8 tensor stored as uint16 / uint8).
    """
    ptr, adt, shape, strides = _device_view(array)
    dt = np.dtype(dtype) if dtype is not None else adt
    if dt.itemsize != adt.itemsize:
        _fail(f"dtype {dt} must have the array's element size ({adt}, {adt.itemsize} B)")
    return encode_tiled(ptr, dt, shape, strides, box, swizzle=swizzle, array=array, **kw)


def to_device(maps, stream=0):
    """One ``uint8[len(maps), 128]`` device array holding the maps, for a kernel argument."""
    from numba import cuda

    maps = list(maps)
    if not maps or not all(isinstance(m, TensorMap) for m in maps):
        _fail(f"to_device takes a non-empty list of TensorMap, got {maps!r}")
    host = np.stack([m.bytes for m in maps])
    return cuda.to_device(host, stream=stream)
