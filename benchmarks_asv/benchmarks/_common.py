"""What the benchmark families share: GPU detection, device timing, inputs, per-case results.

Each family measures every case once, in its asv ``setup_cache`` process, and its ``track_``
benchmarks only read the stored numbers. Two reasons: asv starts a fresh process for every
parameter combination (spawn launch method), and a process that imports CuPy and nbkernels and
opens a CUDA context costs 1.5-2 s, against ~0.2 s for one that reads a number; and asv_runner
>= 0.3 times each call of a ``time_`` benchmark that has a ``setup`` separately, so a sample
would hold one kernel launch and the host gap in front of it instead of device time.
"""
from __future__ import annotations

import functools
import importlib.util
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Device timing: calls are issued back to back in batches of about BATCH_SECONDS, so the host's
# ~9 us per call lands inside a batch once instead of in front of every call; a case gets about
# CASE_SECONDS of timed batches (at least MIN_REPS, at most MAX_REPS), medians taken.
BATCH_SECONDS = 2e-3
MAX_BATCH = 500
CASE_SECONDS = 0.15
MIN_REPS, MAX_REPS = 3, 15


def check_installed_commit():
    """Raise unless ``import nbkernels`` finds the commit run.sh installed for this run
    (``$NBK_ASV_SITE``): an editable install or a checkout earlier on the path would otherwise
    be measured silently under another commit's name."""
    import os

    site = os.environ.get("NBK_ASV_SITE")
    if not site:
        return
    import nbkernels

    found = Path(nbkernels.__file__).resolve()
    if not found.is_relative_to(Path(site).resolve()):
        raise RuntimeError(f"nbkernels imported from {found}, not from the commit installed in "
                           f"{site}: something earlier on sys.path shadows it")


def gpu_skip_reason():
    """None on a machine with a CUDA GPU, else why every GPU benchmark reports n/a."""
    try:
        from numba import cuda
    except ImportError as e:
        return f"numba-cuda is not importable: {e}"
    if not cuda.is_available():
        return "no CUDA GPU on this machine"
    return None


@functools.lru_cache(maxsize=None)
def head_bench():
    """nbkernels/matmul/bench.py of this checkout (not of the commit being measured), loaded by
    path: every commit is timed by the same code, and commits before 5f5f731 have no bench.py."""
    path = REPO / "nbkernels" / "matmul" / "bench.py"
    spec = importlib.util.spec_from_file_location("_nbkernels_head_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def device_seconds(fn, sets):
    """Median device seconds per call of ``fn(*s)``, rotating over the argument sets ``sets``.

    Timed with bench.py's ``_time`` (CUDA events around each timed batch, warm-up first)."""
    bench = head_bench()
    single, _ = bench._time(fn, sets, 3, warmup=2)
    batch = max(1, min(MAX_BATCH, math.ceil(BATCH_SECONDS / max(single, 1e-9))))
    reps = max(MIN_REPS, min(MAX_REPS, math.ceil(CASE_SECONDS / (single * batch))))
    turn = [0]

    def run_batch():
        for _ in range(batch):
            fn(*sets[turn[0] % len(sets)])
            turn[0] += 1

    per_batch, _ = bench._time(run_batch, [()], reps, warmup=1)
    return per_batch / batch


def rotation_count(set_bytes, l2_bytes):
    """How many input sets to rotate among so that L2 holds none of them between two uses
    (``nbkernels.matmul.bench.rotation_count``: three times L2, 2 to 8 sets)."""
    from nbkernels.matmul.bench import rotation_count

    return rotation_count(set_bytes, l2_bytes)


ITEMSIZE = {"bf16": 2, "f16": 2, "tf32": 4, "f32": 4, "int8": 1, "f64": 8}


def device_array(rng, shape, dtype):
    """A CuPy array of normal(0, 1) values (int8: scaled by 32 and clipped) made on the GPU;
    host generation takes seconds at 8192^2, several times per case."""
    import cupy
    import ml_dtypes

    if dtype == "f64":
        return rng.standard_normal(shape, dtype=cupy.float64)
    x = rng.standard_normal(shape, dtype=cupy.float32)
    if dtype in ("f32", "tf32"):
        return x
    if dtype == "f16":
        return x.astype(cupy.float16)
    if dtype == "int8":
        return cupy.clip(x * 32, -127, 127).astype(cupy.int8)
    if dtype == "bf16":
        # bf16 is the top half of an f32 (truncated): written through a uint16 view
        out = cupy.empty(shape, ml_dtypes.bfloat16)
        out.view(cupy.uint16)[...] = (x.view(cupy.uint32) >> 16).astype(cupy.uint16)
        return out
    raise ValueError(f"device_array: unknown dtype {dtype!r}")


def result_dtype(dtype):
    import cupy
    import ml_dtypes

    return {"bf16": ml_dtypes.bfloat16, "f16": cupy.float16, "tf32": cupy.float32,
            "f32": cupy.float32, "int8": cupy.int32, "f64": cupy.float64}[dtype]


def free_gpu_memory():
    """Return CuPy's and torch's cached blocks, so one case's buffers never crowd the next."""
    import sys

    import cupy

    cupy.get_default_memory_pool().free_all_blocks()
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.cuda.empty_cache()


def host_seconds_per_call(fn, calls=2000, rounds=5):
    """Host wall time per call of ``fn`` in a loop with one synchronize at the end (what a Python
    loop of small calls costs; tools/overhead.py's method), median of ``rounds``."""
    import statistics
    import time

    import cupy

    per = []
    for _ in range(rounds):
        for _ in range(50):
            fn()
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        cupy.cuda.Device().synchronize()
        per.append((time.perf_counter() - t) / calls)
    return statistics.median(per)


def measure_cases(cases, measure_one):
    """``{case: {metric: value} | {"skip": why} | {"error": text}}``; ``measure_one(case)``
    returns the metrics of one case or a skip reason (str). A case that raises is recorded as an
    error, so its own benchmarks fail with the message and the other cases still get numbers."""
    import traceback

    out = {}
    for case in cases:
        try:
            got = measure_one(case)
            out[case] = {"skip": got} if isinstance(got, str) else got
        except Exception:
            out[case] = {"error": traceback.format_exc(limit=6)}
        finally:
            free_gpu_memory()
    return out


class Family:
    """Per-case ``track_`` benchmarks of one kernel family, read from its ``setup_cache``.

    The cache is ``{"skip": why}`` for the whole family (no GPU, say) or ``{"cases": {(class
    name, *params): entry}}``, an entry being metrics, ``{"skip": why}`` (function or variant
    missing at this commit or on this GPU) or ``{"error": traceback}``. A skip raises
    NotImplementedError in ``setup``, which asv records as n/a; an error fails only that
    case's benchmarks."""

    # Results stay comparable across edits of the benchmark code until this is bumped; bump it
    # when a change alters what a number means.
    version = "1"
    timeout = 120

    def entry(self, cache, params):
        return cache["cases"][(type(self).__name__, *params)]

    def setup(self, cache, *params):
        why = cache.get("skip") or self.entry(cache, params).get("skip")
        if why:
            raise NotImplementedError(why)

    def value(self, cache, params, metric):
        entry = self.entry(cache, params)
        if "error" in entry:
            raise RuntimeError("measuring this case failed:\n" + entry["error"])
        if entry.get(metric) is None:
            # NaN is how asv stores a skipped value (n/a): a baseline missing for this case
            print(f"asv: n/a: {entry.get(metric + '_skip') or metric + ' not measured'}")
            return float("nan")
        return entry[metric]


CALL_MODES = ("out", "alloc")  # a small call with its result given (out=) or allocated


class _CallOverhead(Family):
    """Host wall time per repeat call of a small operation, per :data:`CALL_MODES` (metric
    "seconds"); a subclass sets ``setup_cache`` and adds its ratio track. (The leading
    underscore keeps asv from taking this base for a benchmark.)"""

    params = (list(CALL_MODES),)
    param_names = ("result",)

    def track_call(self, cache, mode):
        return self.value(cache, (mode,), "seconds")

    track_call.unit = "seconds"

