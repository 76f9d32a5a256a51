"""``nbkernels.gemm``: ``alpha * a @ b + beta * c`` on the arrays callers already have.

The call is planned (validation, kind, layouts, alignment, variant, tile) by :func:`plan`, which
:func:`explain` prints and :func:`gemm` executes. Nothing the caller passed is modified except
``out``, and ``out`` only after every check has passed.
"""
from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from .. import arrays
from ..arch import Arch, device_arch
from ..errors import NbkernelsError
from ..smem import device_limits
from . import config as cfgmod
from . import mma_kernel, simt_kernel, wgmma_config, wgmma_kernel

SUPPORTED = ("float16", "bfloat16", "float32", "float64", "int8")
PRECISIONS = ("tf32", "3xtf32", "fp32")
RESULT_DTYPE = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
                "float64": "float64", "int8": "int32"}

#: Variant per compute-capability major (quack-style table). Every entry works. The sm90a
#: kernel runs on compute capability 9.0 only (arch-specific code) and for the kinds in
#: wgmma_kernel.SUPPORTED_KINDS; other kinds and other 9.x GPUs run the sm_80-class variant.
VARIANT_BY_MAJOR = {7: "sm75", 8: "sm80", 9: "sm90a", 10: "sm80", 12: "sm80"}
VARIANTS = ("sm90a", "sm80", "sm75", "simt", "dmma")


def _dtype_name(dt: np.dtype) -> str:
    return "bfloat16" if dt == arrays.BF16 else np.dtype(dt).name


@dataclass
class Plan:
    kind: str  # f16 bf16 tf32 3xtf32 s8 f32 f64
    variant: str  # sm80, sm75, simt
    arch: Arch | None
    batch: int
    m: int
    n: int
    k: int
    result_dtype: np.dtype
    a: arrays.ArrayView
    b: arrays.ArrayView
    c: arrays.ArrayView | None
    out: arrays.ArrayView | None
    a_kmajor: bool = True
    b_kmajor: bool = True
    copies: list = field(default_factory=list)  # (operand, reason) copied before the launch
    aligned: bool = True
    tile: cfgmod.TileConfig | None = None
    splits: int = 1  # split-K: slices of K computed by separate blocks, then reduced
    kchunk: int = 0
    reasons: list = field(default_factory=list)
    host: bool = False
    out_user: object = None  # the caller's out object (a torch CPU tensor behind a NumPy view)
    swap: bool = False  # run as D^T = B^T A^T (run.execute), the operands' roles exchanged

    def describe(self) -> str:
        lines = [f"gemm {self.batch}x{self.m}x{self.n}x{self.k} ({self.kind}) -> "
                 f"{_dtype_name(self.result_dtype)}",
                 f"  variant: {self.variant}" + (f" on {self.arch}" if self.arch else "")]
        if self.variant != "simt":
            lines.append(f"  layouts: a {'K' if self.a_kmajor else 'M'}-major, "
                         f"b {'K' if self.b_kmajor else 'N'}-major"
                         + ("; run as D^T = b^T a^T (b^T K-major, a^T N-major)" if self.swap
                            else ""))
            lines.append("  loader: " + ("TMA boxes (128-byte swizzle) on mbarriers"
                                         if self.variant == "sm90a" else
                                         "cp.async 16 B" if self.aligned else "ordinary loads"))
            if self.tile:
                lines.append(f"  tile: {self.tile}, "
                             f"{self.tile.smem_bytes(self.kind)} B shared memory")
            if self.splits > 1:
                lines.append(f"  split-K: {self.splits} slices of {self.kchunk}, then a reduction")
        for op, why in self.copies:
            lines.append(f"  copy of {op}: {why}")
        lines += [f"  why: {r}" for r in self.reasons]
        return "\n".join(lines)


def _kind(dtype_name, precision, name_a="a"):
    if precision is not None and precision not in PRECISIONS:
        raise NbkernelsError(f"gemm: precision must be one of {PRECISIONS} or None, got {precision!r}")
    if dtype_name == "float32":
        return {"tf32": "tf32", "3xtf32": "3xtf32", "fp32": "f32", None: "3xtf32"}[precision]
    if precision is not None:
        raise NbkernelsError(
            f"gemm: precision applies to float32 inputs only; {name_a} is {dtype_name}")
    return {"float16": "f16", "bfloat16": "bf16", "float64": "f64", "int8": "s8"}[dtype_name]


def _check_same_side(views):
    host = {name for name, v in views if v is not None and v.host}
    dev = {name: v.device for name, v in views if v is not None and not v.host}
    if host and dev:
        h, d = sorted(host)[0], sorted(dev)[0]
        raise NbkernelsError(
            f"gemm: {h} is a host (NumPy/CPU) array but {d} is on GPU {dev[d]}; pass all "
            "arrays on the GPU, or all on the host")
    devices = set(dev.values()) - {None}
    if len(devices) > 1:
        raise NbkernelsError(f"gemm: arrays are on different GPUs {dict(sorted(dev.items()))}")
    return bool(host)


def _batch_and_mat(v, name):
    if v.ndim == 2:
        return 1, 0, v.shape, v.strides
    if v.ndim == 3:
        return v.shape[0], (v.strides[0] if v.shape[0] > 1 else 0), v.shape[1:], v.strides[1:]
    raise NbkernelsError(f"gemm: {name} must be 2-D or 3-D (batched), got {v.ndim}-D shape {v.shape}")


def _select_variant(kind, arch, forced):
    forced = forced or os.environ.get("NBKERNELS_VARIANT") or None
    if forced is not None and forced not in VARIANTS:
        raise NbkernelsError(f"gemm: variant must be one of {VARIANTS}, got {forced!r}")
    if kind == "f64" and forced != "simt":  # f64 tensor cores (DMMA) on sm_80+, else SIMT
        if forced not in (None, "dmma"):
            raise NbkernelsError(f"gemm: f64 runs on the dmma or simt variant, not {forced}")
        if arch is None or arch.base >= (8, 0):
            mma = "mma.m16n8k16.f64" \
                if arch is not None and arch.base >= (9, 0) else "mma.m8n8k4.f64"
            return "dmma", ("forced by " + ("argument" if forced else "NBKERNELS_VARIANT")
                            if forced else "f64 on tensor cores, sm_80+: " + mma)
        if forced:
            raise NbkernelsError(f"gemm: variant dmma needs sm_80+; this GPU is {arch}")
        return "simt", f"f64 on {arch}: no f64 tensor cores below sm_80, SIMT kernel"
    if kind in ("f32", "f64"):
        if forced not in (None, "simt"):
            raise NbkernelsError(f"gemm: {kind} runs only on the simt variant, not {forced}")
        return "simt", (f"{kind} uses the SIMT kernel" + (" (forced)" if forced else
                                                          " (no tensor-core path for it yet)"))
    base = VARIANT_BY_MAJOR.get(arch.major, "sm80") if arch else "sm80"
    if arch is not None and arch.base < (7, 5):
        raise NbkernelsError(f"gemm: {kind} needs tensor cores (sm_75+); this GPU is {arch}")
    if base == "sm90a" and (arch.base != (9, 0) or kind not in wgmma_kernel.SUPPORTED_KINDS):
        base = "sm80"
    variant = forced or base
    if variant == "sm90a":
        if kind not in wgmma_kernel.SUPPORTED_KINDS:
            raise NbkernelsError(f"gemm: the sm90a variant computes {wgmma_kernel.SUPPORTED_KINDS}"
                                 f", not {kind}")
        if arch is not None and arch.base != (9, 0):
            raise NbkernelsError(f"gemm: variant sm90a needs compute capability 9.0 (wgmma, "
                                 f"TMA); this GPU is {arch}")
    if variant == "simt":
        raise NbkernelsError(f"gemm: the simt variant computes float32/float64 only, not {kind}")
    if variant == "dmma":
        raise NbkernelsError(f"gemm: the dmma variant computes float64 only, not {kind}")
    if variant == "sm75" and kind != "f16":
        raise NbkernelsError(
            f"gemm: {kind} needs sm_80 tensor cores"
            + (f"; this GPU is {arch}" if arch and arch.base < (8, 0) else " (variant sm75 forced)"))
    if arch is not None and variant == "sm80" and arch.base < (8, 0):
        raise NbkernelsError(f"gemm: variant sm80 needs sm_80+; this GPU is {arch}")
    from numba.cuda import config

    why = ("forced by " + ("argument" if forced else "NBKERNELS_VARIANT")) if forced else \
        f"compute capability {arch.major}.{arch.minor} -> {base}" if arch else \
        "numba's simulator runs the sm80 kernel code" if config.ENABLE_CUDASIM else \
        "no GPU here: planned as on an sm_80-class GPU with 132 SMs"
    return variant, why


#: (SMs, opt-in shared memory per block) assumed where there is no GPU (an H100/H200).
def plan(a, b, c=None, *, alpha=1, beta=0, out=None, precision=None, variant=None,
         tile=None) -> Plan:
    """Validate a call and decide how it runs; raises before anything is touched."""
    va, vb = arrays.as_view(a, "a"), arrays.as_view(b, "b")
    vc = arrays.as_view(c, "c") if c is not None else None
    vo = arrays.as_view(out, "out") if out is not None else None
    da, db = _dtype_name(va.dtype), _dtype_name(vb.dtype)
    for name, d in (("a", da), ("b", db)):
        if d not in SUPPORTED:
            raise NbkernelsError(f"gemm: {name} has dtype {d}; expected one of {SUPPORTED}")
    if da != db:
        raise NbkernelsError(
            f"gemm: a and b must have the same dtype, got a {da} and b {db}; cast one of them "
            f"(e.g. b.astype(a.dtype))")
    kind = _kind(da, precision)
    host = _check_same_side([("a", va), ("b", vb), ("c", vc), ("out", vo)])
    from numba.cuda import config

    if host and not config.ENABLE_CUDASIM:
        # On a GPU, host operands travel as C-contiguous copies: plan for those.
        va, vb = arrays.contiguous_like(va), arrays.contiguous_like(vb)
    ba, sba, (m, ka), (sam, sak) = _batch_and_mat(va, "a")
    bb, sbb, (kb, n), (sbk, sbn) = _batch_and_mat(vb, "b")
    if ka != kb:
        raise NbkernelsError(f"gemm: a.shape[-1] (K={ka}) must equal b.shape[-2] (got {kb})")
    if ba != bb and 1 not in (ba, bb):
        raise NbkernelsError(f"gemm: batch sizes {ba} (a) and {bb} (b) do not broadcast")
    batch = max(ba, bb)
    batched = va.ndim == 3 or vb.ndim == 3
    out_shape = (batch, m, n) if batched else (m, n)
    rdt = np.dtype(arrays.BF16 if RESULT_DTYPE[da] == "bfloat16" else RESULT_DTYPE[da])
    if vo is not None:
        arrays.check_writable(vo, "out", "gemm")
        if tuple(vo.shape) != out_shape:
            raise NbkernelsError(f"gemm: out must have shape {out_shape}, got {tuple(vo.shape)}")
        if vo.dtype != rdt:
            raise NbkernelsError(
                f"gemm: out must have dtype {_dtype_name(rdt)} (the result of {da} inputs), "
                f"got {_dtype_name(vo.dtype)}")
        if any(s < 0 for s in vo.strides) or (vo.size > 1 and 0 in [
                s for s, d in zip(vo.strides, vo.shape) if d > 1]):
            raise NbkernelsError(f"gemm: out must not overlap itself, got strides {vo.strides}")
    if vc is not None:
        if vc.dtype != rdt:
            raise NbkernelsError(
                f"gemm: c must have the result dtype {_dtype_name(rdt)}, got {_dtype_name(vc.dtype)}")
        try:
            np.broadcast_shapes(tuple(vc.shape), out_shape)
            if np.broadcast_shapes(tuple(vc.shape), out_shape) != out_shape:
                raise ValueError
        except ValueError:
            raise NbkernelsError(
                f"gemm: c of shape {tuple(vc.shape)} does not broadcast to the result shape "
                f"{out_shape}") from None
    # out sharing memory with an input (gemm(a, b, out=a)): that input is copied first, or the
    # tiles stored early would overwrite elements other blocks have still to read. c may be
    # out itself (each element is read, then written, by one thread), nothing in between.
    shared = []
    if vo is not None and not (host and not config.ENABLE_CUDASIM):  # (host data is copied)
        shared = [op for op, v in (("a", va), ("b", vb)) if arrays.may_overlap(vo, v)]
        if vc is not None and arrays.may_overlap(vo, vc) and not arrays.same_elements(vo, vc):
            raise NbkernelsError(
                "gemm: c shares memory with out but not element for element (out may be c "
                "itself); pass a copy of c")
    for name, v in (("alpha", alpha), ("beta", beta)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise NbkernelsError(f"gemm: {name} must be a real number, got {v!r}")
    if kind == "s8" and (float(alpha) != int(alpha) or float(beta) != int(beta)):
        raise NbkernelsError("gemm: int8 GEMM takes integer alpha and beta")

    arch = None if config.ENABLE_CUDASIM else device_arch()
    var, why = _select_variant(kind, arch, variant)
    p = Plan(kind, var, arch, batch, m, n, ka, rdt, va, vb, vc, vo, host=host, reasons=[why])
    p.out_user = out
    p.copies += [(op, f"{op} shares memory with out: copied first, so that the result cannot "
                  "overwrite what is still to be read") for op in shared]
    if var == "simt":
        return p
    # Layouts: K-major (row-major a, column-major b) or M/N-major (16-bit kinds, ldmatrix.trans).
    # A dimension of size 1 has no stride to honour; the other one decides.
    esz = cfgmod.ELEMENT_BYTES[kind]
    empty_a, empty_b = va.size == 0, vb.size == 0  # nothing to read: no layout to honour
    a_k, a_m = sak == 1 or ka == 1 or empty_a, sam == 1 or m == 1
    b_k, b_n = sbk == 1 or ka == 1 or empty_b, sbn == 1 or n == 1
    mn_ok = esz in (2, 8)  # M/N-major tiles: ldmatrix.trans (16-bit), 8-byte loads (f64)
    p.a_kmajor = a_k or not (a_m and mn_ok) or "a" in shared  # (a copy is K-major)
    p.b_kmajor = b_k or not (b_n and mn_ok) or "b" in shared
    if not (a_k or (a_m and mn_ok)) and "a" not in shared:
        p.copies.append(("a", f"strides {va.strides} are neither row- nor column-major"
                         if not a_m else f"{kind} takes K-major (row-major) a only"))
    if not (b_k or (b_n and mn_ok)) and "b" not in shared:
        p.copies.append(("b", f"strides {vb.strides} are neither row- nor column-major"
                         if not b_n else f"{kind} takes K-major (column-major) b only"))
    lda = leading_dim(va, "a", p.a_kmajor)
    ldb = leading_dim(vb, "b", p.b_kmajor)
    p.aligned = _aligned(va, lda, sba, esz, "a" in dict(p.copies)) and \
        _aligned(vb, ldb, sbb, esz, "b" in dict(p.copies))
    if not p.aligned:
        if esz == 1:
            for op in ("a", "b"):
                if op not in dict(p.copies):
                    p.copies.append((op, "int8 operands not 16-byte aligned are copied"))
            p.aligned = True
        elif var in ("sm80", "dmma"):
            p.reasons.append("an operand's pointer or leading dimension is not 16-byte aligned: "
                             "ordinary loads instead of cp.async")
    if var == "sm75":
        p.aligned = False
        p.reasons.append("sm_75 has no cp.async: ordinary loads")
    # float64 with an M-major a and a K-major b (both operands transposed): D^T = B^T A^T runs
    # the row-major build (K-major b^T, N-major a^T) on the transposed problem, writing D through
    # swapped strides; a fused epilogue is called with the row and column exchanged back
    # (run.swapped_epilogue). H100 / H200: 0.84-0.91x cuBLAS as they are, 0.91-0.96x swapped
    # (perf-notes d8).
    p.swap = var == "dmma" and not p.a_kmajor and p.b_kmajor
    if p.swap:
        p.reasons.append("a M-major and b K-major: computed as the transposed product "
                         "b^T a^T with the row-major kernel, D written through swapped strides")
    sms, max_smem = device_limits()
    if var == "sm90a":
        if _plan_sm90a(p, tile, variant or os.environ.get("NBKERNELS_VARIANT"), sms, max_smem):
            return p
        var = p.variant  # fell back to the sm_80-class variant, for the reason recorded
    tile = tile or _env_tile()
    if tile is not None:
        if not isinstance(tile, cfgmod.TileConfig):
            raise NbkernelsError(f"gemm: tile must be a TileConfig, got {tile!r}")
        why = cfgmod.misfit(tile, kind)
        if why:
            raise NbkernelsError(f"gemm: tile {tile} cannot run {kind}: {why}")
        if tile.smem_bytes(kind) > max_smem:
            raise NbkernelsError(f"gemm: tile {tile} needs {tile.smem_bytes(kind)} B of shared "
                                 f"memory; this device allows {max_smem}")
        p.tile = tile
        p.reasons.append("tile given by the caller (tile= or NBKERNELS_TILE)")
    elif arch is not None and _tuned(p, a, b, c, alpha, beta, precision, variant):
        pass
    elif kind in cfgmod.FIXED_TILES:
        p.tile = cfgmod.FIXED_TILES[kind]
        p.reasons.append("3xtf32 keeps two fragments per operand: 64x32 warp tiles avoid spills")
    else:
        p.tile = cfgmod.heuristic(kind, *((n, m) if p.swap else (m, n)), ka, batch, sms,
                                  max_smem)
        p.reasons.append(f"tile from the heuristic for {sms} SMs and {max_smem} B shared memory")
    _split_k(p, sms)
    return p


def _plan_sm90a(p, tile, forced, sms, max_smem) -> bool:
    """Tile and checks of the Hopper kernel; False (with the reason) where the sm_80-class
    variant must run the call instead. A forced sm90a that cannot run raises."""
    if tile is not None and not isinstance(tile, wgmma_config.WgmmaConfig):
        tile = None  # a TileConfig (NBKERNELS_TILE) is for the sm_80-class kernel
    cfg = tile or wgmma_config.choose(p.m, p.n, p.batch, sms, max_smem)
    copied = dict(p.copies)
    why = wgmma_kernel.tma_blocker(None if "a" in copied else p.a, None if "b" in copied else p.b,
                                   p.a_kmajor, p.b_kmajor, cfg, p.k)
    tiles = -(-p.m // cfg.bm) * -(-p.n // cfg.bn) * p.batch
    if why is None and not forced and tiles < sms // 2 and \
            p.k >= 2 * MIN_KTILES_PER_SPLIT * wgmma_config.BK:
        why = (f"{tiles} output tiles for {sms} SMs: the sm80-class variant splits K "
               "(the sm90a kernel has no split-K)")
    if why is not None:
        if forced == "sm90a":
            raise NbkernelsError(f"gemm: variant sm90a cannot run this call: {why}")
        p.variant = "sm80"
        p.reasons.append(f"sm90a not used: {why}")
        return False
    if cfg.smem_bytes() > max_smem:
        raise NbkernelsError(f"gemm: sm90a tile {cfg} needs {cfg.smem_bytes()} B of shared "
                             f"memory; this device allows {max_smem}")
    if tile is None:
        cfg = wgmma_config.with_split_tail(cfg, tiles, sms, p.k)
    p.tile = cfg
    p.aligned = True
    p.reasons.append("TMA loads (any M, N, K; edges zero-filled), wgmma from shared memory"
                     + (", tile given by the caller" if tile else
                        f", tile for {sms} SMs ({tiles} tiles)"))
    if cfg.stages_in(max_smem):
        why = ("16-bit results in 16-byte aligned rows staged through shared memory and stored "
               "16 bytes per lane, except in a last tile column cut by N and with beta * C")
        if cfg.defer:
            why += (f"; the last {cfg.defer} of each tile's {cfg.bn // 64} 64-column chunks "
                    "stay staged and are stored during the next tile's k-loop, while its wgmma "
                    "run")
    elif not cfg.staged:
        why = "guarded stores (asked for: WgmmaConfig(staged=False))"
    else:
        why = (f"guarded stores (staging needs {cfg.smem_bytes() + cfg.staging_bytes()}"
               f" B of shared memory; this device allows {max_smem})")
    p.reasons.append("epilogue: " + why)
    if cfg.streamk:
        blocks = wgmma_kernel.streamk_grid(tiles, sms)
        shared = wgmma_kernel.split_tail(tiles, blocks, wgmma_config.k_tiles(p.k))
        if shared:
            p.reasons.append(f"split tail: the last {shared} of {tiles} tiles (a partial wave on "
                             f"{blocks} blocks) each split into two K halves run side by side, "
                             "so that fewer SMs idle through the last wave")
        else:
            p.reasons.append(f"split tail not needed: {tiles} tiles on {blocks} blocks leave no "
                             "partial last wave of at most half the blocks")
    return True


#: Split-K only pays when the M x N tiles leave most SMs idle and each slice keeps enough
#: k-tiles to fill the pipeline.
MAX_SPLITS = 16
MIN_KTILES_PER_SPLIT = 4


def _split_k(p, sms):
    env = os.environ.get("NBKERNELS_SPLITS")
    blocks = -(-p.m // p.tile.bm) * -(-p.n // p.tile.bn) * p.batch
    if blocks == 0 or p.k == 0 or p.variant == "dmma":  # (no f64 split-K partials yet)
        return
    bk = p.tile.bk(p.kind)
    if env:
        want = int(env)
    elif blocks < sms // 2 and p.k >= 2 * MIN_KTILES_PER_SPLIT * bk:
        want = min(-(-sms // blocks), p.k // (MIN_KTILES_PER_SPLIT * bk), MAX_SPLITS)
    else:
        return
    if want <= 1 or p.k == 0:
        return
    kchunk = -(-(-(-p.k // want)) // bk) * bk
    p.splits, p.kchunk = -(-p.k // kchunk), kchunk
    if p.splits > 1:
        p.reasons.append(f"{blocks} output tiles for {sms} SMs: K split in {p.splits} slices"
                         + (" (NBKERNELS_SPLITS)" if env else ""))
    else:
        p.splits, p.kchunk = 1, 0


_TUNING = threading.local()


def _tuned(p, a, b, c, alpha, beta, precision, variant) -> bool:
    """Use a stored autotune winner; with NBKERNELS_AUTOTUNE=1, tune on a miss."""
    from . import tuning

    best = tuning.lookup(p.kind, p.a_kmajor, p.b_kmajor, p.m, p.n, p.k)
    if best is None and os.environ.get("NBKERNELS_AUTOTUNE") == "1" and \
            not getattr(_TUNING, "active", False) and p.variant == "sm80" and not p.host:
        _TUNING.active = True
        try:
            best = tuning.autotune(a, b, c, alpha=alpha, beta=beta, precision=precision,
                                     variant=variant)
        finally:
            _TUNING.active = False
    if best is None:
        return False
    p.tile = best
    p.reasons.append("tile measured fastest by the autotuner for this GPU and size class")
    return True


def _env_tile():
    text = os.environ.get("NBKERNELS_TILE")
    if not text:
        return None
    try:
        return cfgmod.TileConfig(*(int(x) for x in text.split(",")))
    except (TypeError, ValueError) as e:
        raise NbkernelsError(
            f"NBKERNELS_TILE: expected 'bm,bn,bk_bytes,warps_m,warps_n,stages', got {text!r} ({e})"
        ) from None


def leading_dim(v, operand, kmajor):
    """Elements between consecutive rows of the operand's staged tile (0 where only one exists).

    a (M x K): K-major rows are a's rows, M-major rows are its columns; b (K x N): K-major rows
    are b's columns, N-major rows are its rows.
    """
    (rows, cols), (sr, sc) = v.shape[-2:], v.strides[-2:]
    along_rows = (operand == "a") == kmajor  # the tile's rows step along v's rows
    if along_rows:
        return sr if rows > 1 else 0
    return sc if cols > 1 else 0


def _aligned(v, ld, batch_stride, esz, copied):
    if copied:
        return True
    return v.ptr % 16 == 0 and (ld * esz) % 16 == 0 and (batch_stride * esz) % 16 == 0


def explain(a, b, c=None, **kwargs) -> str:
    """How ``gemm(a, b, c, **kwargs)`` would run on the arrays' GPU, and why."""
    kwargs.pop("stream", None)
    if any(map(arrays.via_dlpack, (a, b, c, kwargs.get("out")))):
        return arrays.call_with_dlpack(explain, (a, b, c), kwargs)
    with arrays.on_device(arrays.device_of(a)):
        return plan(a, b, c, **kwargs).describe()


# --- kernels, compiled once per configuration --------------------------------------------------
@functools.lru_cache(maxsize=None)
def _mma(tile, kind, a_km, b_km, aligned, sm75, epilogue, n_extra, pair, partial=False):
    return mma_kernel.build_kernel(tile, kind, a_km, b_km, aligned, sm75, epilogue, n_extra, pair,
                                   partial)


@functools.lru_cache(maxsize=None)
def _wgmma(cfg, kind, a_km, b_km, epilogue, n_extra, pair):
    return wgmma_kernel.build_kernel(cfg, kind, a_km, b_km, epilogue, n_extra, pair)


@functools.lru_cache(maxsize=None)
def _reduce(out_kind, epilogue, n_extra):
    return mma_kernel.build_reduce(out_kind, epilogue, n_extra)


@functools.lru_cache(maxsize=None)
def _simt(kind, epilogue, n_extra):
    return simt_kernel.build_kernel(kind, epilogue, n_extra)
