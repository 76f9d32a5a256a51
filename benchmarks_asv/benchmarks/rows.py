"""Row kernels (rms_norm, layer_norm, softmax, swiglu): device time per call, GB/s and the
fraction of the device-to-device copy bandwidth measured in the same process.

Bytes moved per call = inputs read + output written (_ELEMENTS); the copy bandwidth counts a
1 GiB copy's bytes read and written. At 64x4096 the rotating inputs fit in L2 and a call takes a
few microseconds: that case measures per-call cost in a loop, not bandwidth. A function missing
at a commit is reported n/a.
"""
from __future__ import annotations

from ._common import (CALL_MODES, ITEMSIZE, Family, _CallOverhead, check_installed_commit,
                      device_array, device_seconds, gpu_skip_reason, host_seconds_per_call,
                      measure_cases, result_dtype, rotation_count)

OPS = ("rms_norm", "layer_norm", "softmax", "swiglu")
DTYPES = ("f16", "bf16", "f32")
# a decode step's activations; a large prefill batch; a model width whose rows do not fill
# power-of-two blocks (50-64% of copy before session 47's register rows, perf-notes r45); a
# narrow model width (BERT-base, GPT-2: 16-bit layer_norm 36% of copy before session 50's
# narrow builds, r54); ViT-B's attention rows of 197 and GPT-2's vocabulary of 50,257
# (misaligned in 16 bits: softmax works on them in place since session 51, r59; the other ops
# through the padded copies, 5-10% of copy before session 50's copy kernel, r57-r58)
SHAPES = ("64x4096", "8192x8192", "16384x5120", "131072x768", "262144x197", "4096x50257")
COPY_BYTES = 1 << 30

# elements read + written per call, for M rows of N: (x, weight, out), (x, weight, bias, out),
# (x, out), (gate, up, out)
_ELEMENTS = {
    "rms_norm": lambda m, n: 2 * m * n + n,
    "layer_norm": lambda m, n: 2 * m * n + 2 * n,
    "softmax": lambda m, n: 2 * m * n,
    "swiglu": lambda m, n: 3 * m * n,
}


def _dims(shape):
    m, n = shape.split("x")
    return int(m), int(n)


def _call(op, dtype, shape, count, l2):
    """(function of one argument set, argument sets) for one case."""
    import cupy

    import nbkernels

    fn = getattr(nbkernels, op)
    m, n = _dims(shape)
    rng = cupy.random.default_rng(0)
    if count is None:  # the rotating arrays of one set: x, or gate and up
        count = rotation_count(m * n * ITEMSIZE[dtype] * (2 if op == "swiglu" else 1), l2)
    out = cupy.empty((m, n), result_dtype(dtype))
    if op == "rms_norm":
        w = device_array(rng, (n,), dtype)
        sets = [(device_array(rng, (m, n), dtype),) for _ in range(count)]
        return (lambda x: fn(x, w, out=out)), sets
    if op == "layer_norm":
        w, b = device_array(rng, (n,), dtype), device_array(rng, (n,), dtype)
        sets = [(device_array(rng, (m, n), dtype),) for _ in range(count)]
        return (lambda x: fn(x, w, b, out=out)), sets
    if op == "softmax":
        sets = [(device_array(rng, (m, n), dtype),) for _ in range(count)]
        return (lambda x: fn(x, out=out)), sets
    sets = [(device_array(rng, (m, n), dtype), device_array(rng, (m, n), dtype))
            for _ in range(count)]
    return (lambda g, u: fn(g, u, out=out)), sets


def _copy_gbps():
    import cupy

    src = cupy.ones(COPY_BYTES, cupy.uint8)
    dst = cupy.empty_like(src)
    seconds = device_seconds(lambda: cupy.copyto(dst, src), [()])
    return 2 * COPY_BYTES / seconds / 1e9


def _missing(op):
    import nbkernels

    if not hasattr(nbkernels, op):
        return f"nbkernels.{op} does not exist at this commit"
    return None


def _measure_row(case, l2, copy_gbps):
    _, op, dtype, shape = case
    why = _missing(op)
    if why:
        return why
    fn, sets = _call(op, dtype, shape, None, l2)
    seconds = device_seconds(fn, sets)
    gbps = _ELEMENTS[op](*_dims(shape)) * ITEMSIZE[dtype] / seconds / 1e9
    return {"seconds": seconds, "gbps": gbps, "vs_copy": gbps / copy_gbps}


def _call_fn(mode):
    """rms_norm on one 1 x 4096 bf16 row (a decode step's activation): the repeat-call path."""
    import cupy

    import nbkernels

    rng = cupy.random.default_rng(0)
    x, w = device_array(rng, (1, 4096), "bf16"), device_array(rng, (4096,), "bf16")
    out = cupy.empty((1, 4096), result_dtype("bf16"))
    if mode == "out":
        return lambda: nbkernels.rms_norm(x, w, out=out)
    return lambda: nbkernels.rms_norm(x, w)


def _empty_launch_seconds():
    """Host wall time per launch of an empty kernel through CuPy (issue #5's yardstick)."""
    import cupy

    raw = cupy.RawKernel('extern "C" __global__ void nbk_empty(float* p) {}', "nbk_empty")
    buf = cupy.empty(1, cupy.float32)
    return host_seconds_per_call(lambda: raw((1,), (32,), (buf,)))


def _measure_call(mode, empty):
    why = _missing("rms_norm")
    if why:
        return why
    seconds = host_seconds_per_call(_call_fn(mode))
    return {"seconds": seconds, "vs_empty_launch": seconds / empty}


def measure(_bench=None):
    """Every row-kernel case and the copy bandwidth, in one process (asv setup_cache)."""
    check_installed_commit()
    why = gpu_skip_reason()
    if why:
        return {"skip": why}
    import cupy

    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    copy_gbps = _copy_gbps()
    cases = [("Rows", op, dt, shape) for op in OPS for dt in DTYPES for shape in SHAPES]
    found = measure_cases(cases, lambda c: _measure_row(c, l2, copy_gbps))
    empty = _empty_launch_seconds()
    found.update(measure_cases([("RowCallOverhead", mode) for mode in CALL_MODES],
                               lambda c: _measure_call(c[1], empty)))
    found[("CopyBandwidth",)] = {"gbps": copy_gbps}
    return {"cases": found}


measure.timeout = 600


def absent():
    """Why this commit has nothing for this module to measure (no row kernel at all), or None."""
    import nbkernels

    if any(hasattr(nbkernels, op) for op in OPS):
        return None
    return f"nbkernels has none of {', '.join(OPS)}"


def prewarm_tasks():
    return [(op, dt, shape) for op in OPS for dt in DTYPES for shape in SHAPES] + \
        [("call", mode) for mode in CALL_MODES]


def prewarm(task):
    """Run one case once, so its kernels are compiled into $NBKERNELS_CACHE_DIR."""
    import cupy

    if task[0] == "call":
        if not _missing("rms_norm"):
            _call_fn(task[1])()
    elif not _missing(task[0]):
        fn, sets = _call(*task, count=1, l2=0)
        fn(*sets[0])
    cupy.cuda.Device().synchronize()


class Rows(Family):
    """``op(x, ..., out=out)`` on M x N row-major arrays; weights and bias of N."""

    setup_cache = measure
    params = (list(OPS), list(DTYPES), list(SHAPES))
    param_names = ("op", "dtype", "shape")

    def track_time(self, cache, *params):
        return self.value(cache, params, "seconds")

    track_time.unit = "seconds"

    def track_gbps(self, cache, *params):
        return self.value(cache, params, "gbps")

    track_gbps.unit = "GB/s"

    def track_vs_copy(self, cache, *params):
        return self.value(cache, params, "vs_copy")

    track_vs_copy.unit = "x copy bandwidth"


class CopyBandwidth(Family):
    """Device-to-device copy of 1 GiB (bytes read + written), the row kernels' ceiling."""

    setup_cache = measure

    def track_gbps(self, cache):
        return self.value(cache, (), "gbps")

    track_gbps.unit = "GB/s"


class RowCallOverhead(_CallOverhead):
    """Host wall time per repeat call of ``rms_norm`` on a 1 x 4096 bf16 row, with ``out=`` or
    allocating the result, and its ratio to an empty kernel launched through CuPy in the same
    process (issue #5 asks for at most 1.5; a larger number is slower)."""

    setup_cache = measure

    def track_vs_empty_launch(self, cache, mode):
        return self.value(cache, (mode,), "vs_empty_launch")

    track_vs_empty_launch.unit = "x an empty launch's time"
