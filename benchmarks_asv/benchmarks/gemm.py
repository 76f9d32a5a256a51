"""nbkernels.gemm: device time per call, TFLOPS and speed relative to cuBLAS, per variant and
dtype; host time per call at 128^3, on the same arrays and with a new operand each call.

FLOPs = 2*M*N*K per GEMM (int8: integer operations, reported in the same unit). cuBLAS is
timed through torch (bf16, f16, tf32 with ``allow_tf32``, f64: ``torch.matmul``; int8:
``torch._int_mm``, cuBLASLt's int8 GEMM) on the same buffers, in the same process, by the same
timer. Inputs rotate among sets three times larger than L2 (_common.rotation_count).
"""
from __future__ import annotations

from ._common import (CALL_MODES, ITEMSIZE, REPO, Family, _CallOverhead,
                      check_installed_commit, device_array, device_seconds, gpu_skip_reason,
                      host_seconds_per_call, measure_cases, result_dtype, rotation_count)


def _checkout_variants():
    """The GEMM variants of this checkout's nbkernels, read from its source: importing it would
    cost each benchmark process a second, and asv starts one per number."""
    import ast

    tree = ast.parse((REPO / "nbkernels" / "matmul" / "api.py").read_text())
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(getattr(t, "id", None) == "VARIANTS" for t in targets):
            return ast.literal_eval(node.value)
    raise RuntimeError("nbkernels/matmul/api.py of this checkout assigns no VARIANTS")


# Forced variants: the sm_80-class kernel, and the Hopper one once the checkout has it (older
# commits measured by this code then report it n/a).
VARIANTS = tuple(v for v in ("sm80", "sm90a") if v in _checkout_variants())
DTYPES = ("bf16", "f16", "tf32", "int8")
SIZES = (512, 1024, 2048, 4096, 8192)
# decode-like (16 tokens), an MLP up-projection, a short-K projection
LLM_SHAPES = ("16x4096x4096", "4096x11008x4096", "8192x8192x1024")

# compute capability each forced variant needs; sm_90a code runs on 9.0 alone
_NEEDS = {"sm80": lambda cc: cc >= (8, 0), "sm90a": lambda cc: cc == (9, 0),
          "dmma": lambda cc: cc >= (8, 0)}
# the benchmark's dtype names as nbkernels' kinds (wgmma_kernel.SUPPORTED_KINDS)
_KIND = {"bf16": "bf16", "f16": "f16", "tf32": "tf32", "int8": "s8", "f64": "f64"}


def _specs():
    """(benchmark class, its params) -> (variant, dtype, m, n, k), for every GEMM case."""
    specs = {}
    for v in VARIANTS:
        for dt in DTYPES:
            for s in SIZES:
                specs[("Gemm", v, dt, s)] = (v, dt, s, s, s)
        for shape in LLM_SHAPES:
            specs[("GemmLLM", v, shape)] = (v, "bf16", *map(int, shape.split("x")))
    for s in SIZES:
        specs[("GemmF64", s)] = ("simt", "f64", s, s, s)
        specs[("GemmF64Dmma", s)] = ("dmma", "f64", s, s, s)
    return specs


def _context():
    import cupy

    from nbkernels.matmul import api

    dev = cupy.cuda.Device()
    cc = (int(dev.compute_capability[:-1]), int(dev.compute_capability[-1]))  # "90" -> (9, 0)
    try:  # the kinds the commit's sm90a kernel computes (bf16 and f16 since it landed)
        from nbkernels.matmul.wgmma_kernel import SUPPORTED_KINDS as sm90a_kinds
    except ImportError:
        sm90a_kinds = ("bf16", "f16")
    return {"cc": cc, "l2": dev.attributes["L2CacheSize"], "variants": tuple(api.VARIANTS),
            "kinds": {"sm90a": tuple(sm90a_kinds)}}


def _unavailable(variant, ctx, dtype=None):
    """Why a forced variant cannot run a case here (n/a), or None."""
    if variant == "simt":
        return None
    if variant not in ctx["variants"]:
        return (f"variant {variant} does not exist at this commit "
                f"(it has {', '.join(ctx['variants'])})")
    if not _NEEDS[variant](ctx["cc"]):
        return f"variant {variant} does not run on compute capability {ctx['cc']}"
    kinds = ctx["kinds"].get(variant)
    if dtype is not None and kinds is not None and _KIND[dtype] not in kinds:
        return f"variant {variant} computes {', '.join(kinds)}, not {dtype}"
    return None


def _operands(spec, ctx, count=None):
    import cupy

    variant, dtype, m, n, k = spec
    rng = cupy.random.default_rng(0)
    if count is None:
        count = rotation_count((m * k + k * n) * ITEMSIZE[dtype], ctx["l2"])
    sets = [(device_array(rng, (m, k), dtype), device_array(rng, (k, n), dtype))
            for _ in range(count)]
    out = cupy.empty((m, n), result_dtype(dtype))
    kw = {"variant": variant, "precision": "tf32" if dtype == "tf32" else None}
    return sets, out, kw


def _cublas_seconds(dtype, sets, m, n):
    """(seconds per cuBLAS call, None) or (None, why it was not timed)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed: cuBLAS is timed through torch"
    import cupy

    def as_torch(x):  # torch reads CuPy's bf16 through an int16 view (bench.py does the same)
        if dtype == "bf16":
            return torch.from_dlpack(x.view(cupy.int16)).view(torch.bfloat16)
        return torch.from_dlpack(x)

    tsets = [(as_torch(a), as_torch(b)) for a, b in sets]
    if dtype == "int8":
        if m <= 16:
            return None, "torch._int_mm (cuBLASLt int8) needs M > 16"
        # cuBLASLt's int8 kernels want b column-major (its "TN" layout); with a row-major b
        # torch._int_mm ran at about 128 TOPS at 8192^3 on an H200 (session 37). The baseline
        # is cuBLAS at its best: the same values, b stored column-major.
        tsets = [(ta, tb.t().contiguous().t()) for ta, tb in tsets]
        fn = torch._int_mm
    else:
        tout = torch.empty((m, n), dtype=tsets[0][0].dtype, device=tsets[0][0].device)

        def fn(a, b):
            return torch.matmul(a, b, out=tout)
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    try:
        return device_seconds(fn, tsets), None
    except RuntimeError as e:  # a baseline torch refuses leaves nbkernels' own numbers standing
        return None, f"cuBLAS through torch failed: {e}"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev


def _measure_gemm(spec, ctx):
    import nbkernels

    why = _unavailable(spec[0], ctx, spec[1])
    if why:
        return why
    _, dtype, m, n, k = spec
    sets, out, kw = _operands(spec, ctx)
    seconds = device_seconds(lambda a, b: nbkernels.gemm(a, b, out=out, **kw), sets)
    base, base_why = _cublas_seconds(dtype, sets, m, n)
    return {"seconds": seconds, "tflops": 2.0 * m * n * k / seconds / 1e12,
            "vs_cublas": base / seconds if base else None, "vs_cublas_skip": base_why}


#: GEMM call-overhead modes: the shared ones, and ``out=`` with a new ``a`` each call
#: (FRESH_OPERANDS arrays in turn, one ``b``: a fresh activation and a weight; on compute
#: capability 9.0 the sm90a variant forced, whose call encodes the new operand's tensor map)
NEW_A = "out_new_a"
GEMM_CALL_MODES = CALL_MODES + (NEW_A,)
#: more than the sm90a map cache keeps (wgmma_kernel.MapCache.REMEMBERED, 256), so every call
#: meets an operand it has no map for
FRESH_OPERANDS = 300


def _call_fns(mode):
    import itertools

    import cupy

    import nbkernels

    rng = cupy.random.default_rng(0)
    a, b = (device_array(rng, (128, 128), "f16") for _ in range(2))
    out = cupy.empty((128, 128), cupy.float16)
    if mode == NEW_A:
        fresh = [a] + [device_array(rng, (128, 128), "f16") for _ in range(FRESH_OPERANDS - 1)]
        kw = {"variant": "sm90a"} if cupy.cuda.Device().compute_capability == "90" else {}
        ours, theirs = itertools.cycle(fresh).__next__, itertools.cycle(fresh).__next__
        return (lambda: nbkernels.gemm(ours(), b, out=out, **kw)), \
            (lambda: cupy.matmul(theirs(), b, out=out))
    if mode == "out":
        return (lambda: nbkernels.gemm(a, b, out=out)), (lambda: cupy.matmul(a, b, out=out))
    return (lambda: nbkernels.gemm(a, b)), (lambda: cupy.matmul(a, b))


def _measure_call(mode):
    ours, cupy_matmul = _call_fns(mode)
    seconds = host_seconds_per_call(ours)
    return {"seconds": seconds, "vs_cupy": host_seconds_per_call(cupy_matmul) / seconds}


def measure(_bench=None):
    """Every GEMM case of this module, measured in one process (asv setup_cache)."""
    check_installed_commit()
    why = gpu_skip_reason()
    if why:
        return {"skip": why}
    ctx = _context()
    specs = _specs()
    cases = list(specs) + [("CallOverhead", mode) for mode in GEMM_CALL_MODES]
    return {"cases": measure_cases(cases, lambda c: _measure_call(c[1]) if c[0] == "CallOverhead"
                                   else _measure_gemm(specs[c], ctx))}


measure.timeout = 900


def prewarm_tasks():
    """Cases to run once before measuring; those with M of 512, 2048 or 16 first: with the tile
    heuristic they need distinct kernels (64x64, 128x128, split-K), the others reuse them, so
    parallel workers compile different kernels instead of one kernel several times."""
    specs = sorted(_specs().values(), key=lambda s: s[2] not in (512, 2048, 16))
    return specs + [("call", mode) for mode in GEMM_CALL_MODES]


def prewarm(task):
    """Run one case once, so its kernels are compiled into $NBKERNELS_CACHE_DIR."""
    import cupy

    import nbkernels

    if task[0] == "call":
        _call_fns(task[1])[0]()
    else:
        ctx = _context()
        if _unavailable(task[0], ctx, task[1]):
            return
        sets, out, kw = _operands(task, ctx, count=1)
        nbkernels.gemm(*sets[0], out=out, **kw)
    cupy.cuda.Device().synchronize()


class _Gemm(Family):
    setup_cache = measure

    def track_time(self, cache, *params):
        return self.value(cache, params, "seconds")

    track_time.unit = "seconds"

    def track_tflops(self, cache, *params):
        return self.value(cache, params, "tflops")

    track_tflops.unit = "TFLOPS"

    def track_vs_cublas(self, cache, *params):
        return self.value(cache, params, "vs_cublas")

    track_vs_cublas.unit = "x cuBLAS speed"


class Gemm(_Gemm):
    """Square M = N = K, row-major a and b, ``out=`` given; variant forced."""

    params = (list(VARIANTS), list(DTYPES), list(SIZES))
    param_names = ("variant", "dtype", "size")


class GemmLLM(_Gemm):
    """bf16 at LLM-like shapes, MxNxK."""

    params = (list(VARIANTS), list(LLM_SHAPES))
    param_names = ("variant", "shape")


class GemmF64(_Gemm):
    """float64 on the SIMT kernel, forced (what GPUs below sm_80 get; cuBLAS uses DMMA tensor
    cores where the GPU has them)."""

    params = (list(SIZES),)
    param_names = ("size",)


class GemmF64Dmma(_Gemm):
    """float64 on tensor cores (the dmma variant, forced: what sm_80+ gets by default)."""

    params = (list(SIZES),)
    param_names = ("size",)


class CallOverhead(_CallOverhead):
    """Host time per call at 128^3 f16 (fast path), with ``out=`` or allocating the result, and
    with ``out=`` and a new ``a`` each call (:data:`NEW_A`); speed relative to cupy.matmul
    timed the same way on the same arrays."""

    params = (list(GEMM_CALL_MODES),)
    setup_cache = measure

    def track_vs_cupy(self, cache, mode):
        return self.value(cache, (mode,), "vs_cupy")

    track_vs_cupy.unit = "x cupy.matmul speed"

