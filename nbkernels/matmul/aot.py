"""The GEMM family for ``nbkernels compile``, ``doctor`` and ``validate --as`` (protocol:
:mod:`nbkernels.aot`).

Catalogue: every variant x dtype kind that the dispatch can select (``variant=`` forcing
included) in the default tile configuration, with its split-K partial-product kernel, plus the
split-K reductions and the SIMT kernels. Layout and loader choices other than the main path
(K-major operands, cp.async, paired 16-bit stores) are left to ``validate``, which runs them.
"""
from __future__ import annotations

import dataclasses
import functools

from numba import types

from ..arch import LIMITS, Arch
from . import api, config as cfgmod

#: tensor-core kinds of the sm80 variant, and the SASS instruction each must compile to
SM80_KINDS = ("f16", "bf16", "tf32", "3xtf32", "s8")
TENSOR_OP = {"f16": "HMMA", "bf16": "HMMA", "tf32": "HMMA", "3xtf32": "HMMA", "s8": "IMMA"}
#: (dtype, precision, kind) of every public GEMM input, for doctor's dispatch table
PUBLIC = (("float16", None, "f16"), ("bfloat16", None, "bf16"), ("float32", None, "3xtf32"),
          ("float32", "tf32", "tf32"), ("float32", "fp32", "f32"), ("int8", None, "s8"),
          ("float64", None, "f64"))


#: the tf32 tile to measure against the default one (perf-notes: the tf32 spill fix)
TF32_CANDIDATE = cfgmod.TileConfig(256, 128, 64, 4, 2, 3)


def default_tile(kind: str, arch: Arch) -> cfgmod.TileConfig:
    """The tile ``plan`` picks for a large problem (4096^3) on ``arch`` without autotuning."""
    if kind in cfgmod.FIXED_TILES:
        return cfgmod.FIXED_TILES[kind]
    lim = LIMITS.get(arch.base)  # an arch the table lacks: the smallest recent limit, 99 KB
    return cfgmod.heuristic(kind, 4096, 4096, 4096, 1, 132, lim.block_smem if lim else 99 * 1024)


_BUILT: dict = {}  # (builder, its arguments) -> kernel, in this (worker) process


def _once(builder, *args):
    """``builder(*args)``, built once per process: archs that get the same tile get the same
    function, so that ``nbkernels compile`` runs numba's front end once for them
    (aot.compile_variants)."""
    key = (builder.__module__, builder.__name__, repr(args))
    if key not in _BUILT:
        _BUILT[key] = builder(*args)
    return _BUILT[key]


def _mma(kind: str, sm75: bool, partial: bool, arch: Arch, tile=None):
    from . import mma_kernel, run

    tile = tile or default_tile(kind, arch)
    pair = not partial and cfgmod.ELEMENT_BYTES[kind] == 2  # 16-bit results of aligned rows
    k = _once(mma_kernel.build_kernel, tile, kind, True, True, not sm75, sm75, None, 0, pair,
              partial)
    acc = types.int32 if kind == "s8" else types.float32
    return k.py_func, run._mma_sig(acc, types.Tuple(())), k.nbk_launch_bounds, k.nbk_smem_bytes


def _wgmma(kind: str, a_kmajor: bool, b_kmajor: bool, arch: Arch, streamk: bool = False):
    from . import run, wgmma_config, wgmma_kernel

    # 16-byte aligned rows: the staged epilogue, with the guarded
    cfg = dataclasses.replace(wgmma_config.DEFAULT, streamk=streamk)
    k = wgmma_kernel.build_kernel(cfg, kind, a_kmajor, b_kmajor, None, 0,  # pairs beside it
                                  2 if cfg.staged else True)
    return (k.py_func, run._wgmma_sig(types.Tuple(()), cfg.streamk), k.nbk_launch_bounds,
            k.nbk_smem_bytes)


def _frag_db(kind: str, arch: Arch):
    """The 64-byte 128x128 tile with its fragments double-buffered (TileConfig.frag_db), as
    measured (perf-notes d1); on config.WIDE_K's 64 elements of K a stage the doubled
    fragments spill (68 B on sm_90a)."""
    return _mma(kind, False, False, arch, dataclasses.replace(cfgmod.CANDIDATES[0], frag_db=1))


def _dmma(a_kmajor: bool, b_kmajor: bool, aligned: bool, arch: Arch, frag_db: int = 0):
    from . import mma_kernel, run

    tile = dataclasses.replace(default_tile("f64", arch), frag_db=frag_db)
    k = _once(mma_kernel.build_kernel, tile, "f64", a_kmajor, b_kmajor, aligned)
    return k.py_func, run._mma_sig(types.float64, types.Tuple(())), k.nbk_launch_bounds, \
        k.nbk_smem_bytes


def _simt(kind: str, arch: Arch):
    from . import simt_kernel

    from . import run

    k = _once(simt_kernel.build_kernel, kind)
    return k.py_func, run.simt_sig(kind, types.Tuple(())), None, 0


def _reduce(out_kind: str, arch: Arch):
    from . import mma_kernel

    from . import run

    k = _once(mma_kernel.build_reduce, out_kind)
    return k.py_func, run.reduce_sig(out_kind, types.Tuple(())), None, 0


def aot_variants(arch: Arch):
    from ..aot import Variant

    out = []
    for kind in SM80_KINDS:
        out.append(Variant(f"gemm/sm80/{kind}", "sm_80", functools.partial(_mma, kind, False,
                                                                           False), TENSOR_OP[kind]))
        out.append(Variant(f"gemm/sm80/{kind}/splitk", "sm_80",
                           functools.partial(_mma, kind, False, True), TENSOR_OP[kind]))
    out.append(Variant("gemm/sm75/f16", "sm_75", functools.partial(_mma, "f16", True, False),
                       "HMMA"))
    out.append(Variant("gemm/sm75/f16/splitk", "sm_75",
                       functools.partial(_mma, "f16", True, True), "HMMA"))
    # split-K reductions, one per result kind; only f16's is reachable from sm_75 (sm75 variant)
    for out_kind in ("f16", "bf16", "f32", "s32"):
        out.append(Variant(f"gemm/reduce/{out_kind}", "sm_75" if out_kind == "f16" else "sm_80",
                           functools.partial(_reduce, out_kind)))
    for kind in ("f32", "f64"):
        out.append(Variant(f"gemm/simt/{kind}", "sm_75", functools.partial(_simt, kind)))
    # f64 on tensor cores: row-major a and b (N-major b), a transposed b (K-major), a
    # transposed a (M-major) with either b, and the ordinary-load path (operands not 16-byte
    # aligned). On sm_90a some spill a few registers outside the k loop (16-44 B; measured
    # faster than the spill-free k-groups of 8: perf-notes d4), so spills inside a loop fail
    # them. (A transposed a spilled inside the loop until its loader took two column groups a
    # thread: perf-notes d7.)
    for ak, bk, aligned, tag in ((True, False, True, "nn"), (True, True, True, "nt"),
                                 (False, False, True, "tn"), (False, True, True, "tt"),
                                 (True, False, False, "nn/ld")):
        out.append(Variant(f"gemm/dmma/f64/{tag}", "sm_80",
                           functools.partial(_dmma, ak, bk, aligned), "DMMA",
                           spills_outside_loops=True))
    out.append(Variant("gemm/dmma/f64/nn/fragdb", "sm_80",
                       functools.partial(_dmma, True, False, True, frag_db=1), "DMMA"))
    # candidates to measure: fragment double-buffering, the 256x128 tf32 tile (4x2 warps)
    for kind in ("bf16", "f16"):
        out.append(Variant(f"gemm/sm80/{kind}/fragdb", "sm_80",
                           functools.partial(_frag_db, kind), "HMMA"))
    out.append(Variant("gemm/sm80/tf32/256x128", "sm_80",
                       functools.partial(_mma, "tf32", False, False, tile=TF32_CANDIDATE), "HMMA"))
    # Hopper: row-major a with row-major b (N-major) and with a transposed weight (K-major)
    for kind in ("bf16", "f16"):
        for bk, tag in ((False, "nn"), (True, "nt")):
            out.append(Variant(f"gemm/sm90a/{kind}/{tag}", "sm_90a",
                               functools.partial(_wgmma, kind, True, bk), "HGMMA"))
            # the same tile with a split tail, which the dispatch picks where a short last
            # wave is split (wgmma_config.with_split_tail)
            out.append(Variant(f"gemm/sm90a/{kind}/{tag}/splittail", "sm_90a",
                               functools.partial(_wgmma, kind, True, bk, streamk=True), "HGMMA"))
    return out


def dispatch(arch: Arch | None):
    """(operation, dtype, variant, why) per public GEMM input on a device of ``arch``."""
    rows = []
    for dtype, prec, kind in PUBLIC:
        label = dtype + (f" precision={prec}" if prec else "")
        try:
            variant, why = api._select_variant(kind, arch, None)
        except Exception as e:  # e.g. a GPU too old for tensor cores: say so in the table
            variant, why = "-", str(e)
        rows.append(("gemm", label, variant, why))
    return rows


# --- validate --as: GEMM cases through the target arch's variant ------------------------------
#: relative tolerance on ||out - ref|| / ||ref|| (as tests/gemm_cases.py): f16/bf16 include the
#: result's rounding to 16 bits, tf32 the 10-bit operand mantissas (its reference rounds too)
TOLERANCES = {"f16": 2e-3, "bf16": 1e-2, "tf32": 5e-3, "3xtf32": 1e-5, "f32": 1e-5,
              "f64": 1e-12, "s8": 0.0}
DTYPE_OF = {kind: (dtype, prec) for dtype, prec, kind in PUBLIC}
# (m, n, k, a layout, b layout, batch, with c). Layouts: "r" row-major, "c" column-major, "m"
# row-major one element into a wider buffer (not 16-byte aligned: ordinary loads, or for int8 a
# padded copy). 16x256x4096 leaves most SMs idle: split-K partials and the reduction run.
SHAPES = {
    "main": (128, 128, 128, "r", "c", 0, True),
    "odd": (5, 123, 123, "r", "r", 0, False),
    "batched": (112, 136, 40, "c", "r", 2, True),
    "misaligned": (67, 45, 96, "m", "c", 0, False),
    "split-k": (16, 256, 4096, "r", "c", 0, True),
}
CASES = {
    "sm80": {"f16": ("main", "odd", "batched", "misaligned", "split-k"),
             "bf16": ("main", "batched", "split-k"), "tf32": ("main", "odd", "split-k"),
             "3xtf32": ("main", "batched"), "s8": ("main", "misaligned", "split-k")},
    "sm75": {"f16": ("main", "odd", "batched", "split-k")},
    "simt": {"f32": ("main", "odd"), "f64": ("main", "batched")},
    "dmma": {"f64": ("main", "odd", "batched", "misaligned")},
    # TMA needs 16-byte leading dimensions: shapes of that kind (others fall back to sm80)
    "sm90a": {"bf16": ("main", "batched"), "f16": ("main", "batched")},
}


class GemmCase:
    """One GEMM on random inputs, run through ``variant`` compiled for ``target`` as PTX that the
    driver JIT-compiles for the GPU present; checked against a float64 reference."""

    def __init__(self, target: Arch, variant: str, kind: str, shape: str):
        self.target, self.variant, self.kind, self.shape = target, variant, kind, shape
        self.name = f"gemm/{variant}/{kind}/{shape}"
        self.dtype = DTYPE_OF[kind][0]

    def run(self, rng):
        """(passed, error, tolerance, detail) after running the case once."""
        import numpy as np
        from numba import cuda

        from .. import launch
        from ..smem import planned_for
        from . import run as runmod

        m, n, k, la, lb, batch, with_c = SHAPES[self.shape]
        dtype, prec = DTYPE_OF[self.kind]
        sa, sb = ((batch, m, k), (batch, k, n)) if batch else ((m, k), (k, n))
        a, b = _random(rng, dtype, sa), _random(rng, dtype, sb)
        rdt = np.dtype(np.int32) if dtype == "int8" else a.dtype
        shape = (batch, m, n) if batch else (m, n)
        c = _random(rng, "int32" if dtype == "int8" else dtype, shape) if with_c else None
        alpha, beta = ((3, -2) if dtype == "int8" else (1.5, -0.5)) if with_c else (1, 0)
        poison = np.iinfo(np.int32).min if rdt.kind == "i" else np.nan
        out = _device(np.full(shape, poison, np.float64).astype(rdt), "r")
        forced = self.variant  # simt too: f64 would take dmma on sm_80+
        with planned_for(self.target):  # tiles for the target's shared memory (an A100's)
            p = api.plan(_device(a, la), _device(b, lb), None if c is None else _device(c, "r"),
                         alpha=alpha, beta=beta, out=out, precision=prec, variant=forced)
            p.arch = self.target  # compile for the target arch, not the GPU's own
            with launch.driver_jit():
                runmod.execute(p, alpha, beta)
        cuda.synchronize()
        got = out.copy_to_host()
        got = got.view(rdt) if got.dtype != rdt else got  # bf16 comes back as uint16 bits
        want = _reference(a, b, c, alpha, beta, self.kind)
        if rdt.kind == "i" and (got == poison).any():
            idx = tuple(int(i) for i in np.argwhere(got == poison)[0])
            return False, float("inf"), 0.0, f"unwritten (poison) at {idx}"
        err, where = _relerr(got, want)
        tol = TOLERANCES[self.kind]
        return err <= tol, err, tol, where


def cases(target: Arch):
    """The case table for a target arch: its own variant's kinds, the SIMT kinds, f64 DMMA."""
    tensor = api.VARIANT_BY_MAJOR.get(target.major, "sm80")
    if tensor == "sm90a" and target.suffix != "a":
        tensor = "sm80"  # plain sm_90 code has no wgmma: the sm_80-class variant runs
    out = []
    variants = (tensor, "sm80", "simt") if tensor == "sm90a" else (tensor, "simt")
    for variant in variants:
        for kind, shapes in CASES[variant].items():
            if variant == "sm80" and tensor == "sm90a" and kind in CASES["sm90a"]:
                continue
            out += [GemmCase(target, variant, kind, s) for s in shapes]
    if target.base >= (8, 0):  # f64 on tensor cores
        out += [GemmCase(target, "dmma", "f64", s) for s in CASES["dmma"]["f64"]]
    return out


validate_cases = cases


def _random(rng, dtype, shape):
    import numpy as np

    from ..arrays import BF16

    if dtype in ("int8", "int32"):
        lim = 128 if dtype == "int8" else 50
        return rng.integers(-lim, lim, shape).astype(dtype)
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    return (rng.standard_normal(shape) * rng.choice([0.5, 1.0, 4.0])).astype(dt)


def _device(x, layout):
    """``x`` on the GPU as a numba array in ``layout`` (bf16 re-described: numba has none)."""
    import numpy as np
    from numba import cuda

    from ..arrays import BF16
    from ..runner import DeviceView as _DeviceView

    declared = BF16 if x.dtype == BF16 else None
    bits = x.view(np.uint16) if declared is not None else x
    if layout == "c":  # column-major: the transpose's C-order buffer, described with swapped axes
        d = cuda.to_device(np.ascontiguousarray(bits.swapaxes(-1, -2)))
        return _DeviceView(d, d.shape[:-2] + (d.shape[-1], d.shape[-2]),
                           d.strides[:-2] + (d.strides[-1], d.strides[-2]), declared)
    if layout == "m":
        wide = np.zeros(bits.shape[:-1] + (bits.shape[-1] + 1,), bits.dtype)
        wide[..., 1:] = bits
        d = cuda.to_device(wide)
        d = d[:, 1:] if d.ndim == 2 else d[:, :, 1:]
    else:
        d = cuda.to_device(np.ascontiguousarray(bits))
    return _DeviceView(d, declared=declared) if declared is not None else d


def _reference(a, b, c, alpha, beta, kind):
    import numpy as np

    def f64(x):
        if kind == "tf32":  # the kernel rounds operands to tf32 (cvt.rna): so does the reference
            u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
            return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32).astype(np.float64)
        return x.astype(np.float64)

    r = alpha * np.matmul(f64(a), f64(b))
    return r + beta * c.astype(np.float64) if c is not None else r


def _relerr(got, want):
    import numpy as np

    g = np.asarray(got).astype(np.float64)
    if np.isnan(g).any():
        idx = tuple(int(i) for i in np.argwhere(np.isnan(g))[0])
        return float("inf"), f"NaN (unwritten or poisoned) at {idx}"
    den = max(float(np.linalg.norm(want.ravel())), 1e-30)
    err = float(np.linalg.norm((g - want).ravel())) / den
    worst = np.unravel_index(np.argmax(np.abs(g - want)), want.shape)
    return err, (f"worst at {tuple(int(i) for i in worst)}: expected {want[worst]!r}, "
                 f"got {g[worst]!r}")
