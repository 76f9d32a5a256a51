"""The row kernels as a kernel family of ``nbkernels compile``, ``doctor`` and ``validate``
(the protocol is described in :mod:`nbkernels.aot`)."""
from __future__ import annotations

import functools

from ..arch import Arch
from . import config as cfgmod, host

KINDS = ("f16", "bf16", "f32")
DTYPE = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}
OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu")
#: 16-bit rms_norm's second build, 64 elements a thread (sm_80+; rms_norm_kernel.WIDE_ROWS)
WIDE_KINDS = ("f16", "bf16")
#: the register-row layout's kernels (RowConfig "regs"; 16-bit rows on sm_80+), each at 64
#: elements a thread and, as ``<op>32``, at 32 (rows that fill whole warps of those)
REGS_OPS = ("layer_norm_regs", "softmax_regs", "rms_norm_regs")
#: the builds rows on a warp or a 64-thread block take where they need fewer slot groups a
#: thread than the op's own (config.narrow_per_thread, perf-notes r54-r55), checked at 24
#: elements a thread: rows of 768 on a warp, 1536 on 64 threads (three 16-bit slot groups or
#: six float32 ones)
NARROW_OPS = ("layer_norm", "softmax", "rms_norm", "rms_norm_residual")
NARROW_PER_THREAD = 24
#: softmax's builds for rows that need not start 16-byte aligned, worked on in place
#: (softmax_kernel.build's ``shifted``, perf-notes r59): its main kernel (the looping layouts),
#: its split rows' kernels (two passes; the row staged whole) and, 16-bit on sm_80+, its
#: register-row kernel at 64 a thread
SHIFTED_OPS = ("softmax_shifted", "softmax_shifted_split", "softmax_shifted_whole",
               "softmax_shifted_regs")
#: kernels of an op's split rows apart from its main kernel (softmax_kernel.build's
#: ``nbk_split``, perf-notes r59, and ``nbk_whole``, the row staged whole, r62)
SPLIT_OPS = ("softmax_split", "softmax_whole")
#: the lanes layout's kernels (several short rows a warp, config.lanes_config; perf-notes r63)
#: at 32 elements a thread: softmax's (rows aligned and shifted), rms_norm's (with a residual
#: too) and layer_norm's
LANES_OPS = ("softmax_lanes", "softmax_shifted_lanes", "rms_norm_lanes",
             "rms_norm_residual_lanes", "layer_norm_lanes")


def _build(op: str, kind: str, arch: Arch):
    from . import layer_norm_kernel as L, rms_norm_kernel as R, softmax_kernel as S
    from . import swiglu_kernel as W

    hw = cfgmod.for_arch(arch).sm80
    if op == "padcopy":  # the padded rows' copies (kind: u16 or u32 units; perf-notes r58)
        from . import padcopy as P

        k, sig = P.build(2 if kind == "u16" else 4), P.SIG
    elif op.endswith("_narrow"):
        base, P = op.removesuffix("_narrow"), NARROW_PER_THREAD
        k, sig = {"layer_norm": lambda: (L.build(kind, kind, kind, hw, True, True, P), L.SIG),
                  "softmax": lambda: (S.build(kind, hw, P), S.SIG),
                  "rms_norm": lambda: (R.build(kind, kind, hw, False, P), R.SIG),
                  "rms_norm_residual": lambda: (R.build(kind, kind, hw, True, P), R.SIG)}[base]()
    elif op in ("rms_norm", "rms_norm_residual"):
        k, sig = R.build(kind, kind, hw, op == "rms_norm_residual"), R.SIG
    elif op == "rms_norm_wide":
        k, sig = R.build(kind, kind, hw, False, R.WIDE_PER_THREAD), R.SIG
    elif op == "layer_norm":
        k, sig = L.build(kind, kind, kind, hw, True, True), L.SIG
    elif op == "layer_norm_f32vec":  # float32 weight and bias: groups share them (r35)
        k, sig = L.build(kind, "f32", "f32", hw, True, True), L.SIG
    elif op == "softmax":
        k, sig = S.build(kind, hw), S.SIG
    elif op == "softmax_split":
        k, sig = S.build(kind, hw).nbk_split, S.SIG
    elif op == "softmax_whole":
        k, sig = S.build(kind, hw).nbk_whole, S.SIG
    elif op == "softmax_shifted":
        k, sig = S.build(kind, hw, cfgmod.PER_THREAD, True), S.SIG
    elif op == "softmax_shifted_split":
        k, sig = S.build(kind, hw, cfgmod.PER_THREAD, True).nbk_split, S.SIG
    elif op == "softmax_shifted_whole":
        k, sig = S.build(kind, hw, cfgmod.PER_THREAD, True).nbk_whole, S.SIG
    elif op in LANES_OPS[:2]:
        k, sig = S.build(kind, hw, cfgmod.PER_THREAD, "shifted" in op).nbk_lanes, S.SIG
    elif op in LANES_OPS[2:4]:
        k, sig = R.build(kind, kind, hw, "residual" in op).nbk_lanes, R.SIG
    elif op == "layer_norm_lanes":
        k, sig = L.build(kind, kind, kind, hw, True, True, cfgmod.PER_THREAD).nbk_lanes, L.SIG
    elif op == "softmax_shifted_regs":
        k, sig = S.build(kind, hw, cfgmod.REGS_PER_THREAD, True).nbk_regs, S.SIG
    elif op.removesuffix("32") in REGS_OPS:  # the register-row kernels (16-bit, sm_80+; r43-r45)
        P = cfgmod.PER_THREAD if op.endswith("32") else cfgmod.REGS_PER_THREAD
        base = op.removesuffix("32")
        k = {"layer_norm_regs": lambda: L.build(kind, kind, kind, hw, True, True, P),
             "softmax_regs": lambda: S.build(kind, hw, P),
             "rms_norm_regs": lambda: R.build(kind, kind, hw, False, P)}[base]()
        k, sig = k.nbk_regs, {"layer_norm_regs": L.SIG, "softmax_regs": S.SIG,
                              "rms_norm_regs": R.SIG}[base]
    else:
        k, sig = W.build(kind, hw), W.SIG
    # what compile checks against the assembler's count (aot.verdict): the residency
    # estimate counts it (config.resident_blocks)
    k.py_func.nbk_barriers = host.barriers_of(k)
    return k.py_func, sig, k.nbk_launch_bounds, 0


def aot_variants(arch: Arch):
    """Every op x dtype (weights and bias of x's dtype), rms_norm's 64-element build,
    16-bit layer_norm beside float32 weight and bias (its groups share them), the register
    rows' builds, the narrow rows' build of 24 elements a thread, softmax's kernels of split
    rows (two passes, and the row staged whole) and its shifted builds (misaligned rows in
    place), and the copy kernel of misaligned rows' padded copies (2- and 4-byte units)."""
    from ..aot import Variant

    return [Variant(f"rows/{op}/{kind}", "sm_75", functools.partial(_build, op, kind))
            for op in OPS for kind in KINDS] + \
        [Variant(f"rows/rms_norm_wide/{kind}", "sm_80",
                 functools.partial(_build, "rms_norm_wide", kind)) for kind in WIDE_KINDS] + \
        [Variant(f"rows/layer_norm_f32vec/{kind}", "sm_80",
                 functools.partial(_build, "layer_norm_f32vec", kind)) for kind in WIDE_KINDS] + \
        [Variant(f"rows/{op}{p}/{kind}", "sm_80", functools.partial(_build, op + p, kind))
         for op in REGS_OPS for p in ("", "32") for kind in WIDE_KINDS] + \
        [Variant(f"rows/{op}_narrow/{kind}", "sm_75", functools.partial(_build, op + "_narrow",
                                                                         kind))
         for op in NARROW_OPS for kind in KINDS] + \
        [Variant(f"rows/{op}/{kind}", "sm_75", functools.partial(_build, op, kind))
         for op in SPLIT_OPS + SHIFTED_OPS[:3] + LANES_OPS for kind in KINDS] + \
        [Variant(f"rows/softmax_shifted_regs/{kind}", "sm_80",
                 functools.partial(_build, "softmax_shifted_regs", kind))
         for kind in WIDE_KINDS] + \
        [Variant(f"rows/padcopy/{u}", "sm_75", functools.partial(_build, "padcopy", u))
         for u in ("u16", "u32")]


def dispatch(arch: Arch | None):
    why = {True: "16-byte vectors (misaligned rows: a padded copy first); warp, block or split "
                 "layout by row length", False: "as above; bf16 rounding in integer code (no "
                                                "cvt.bf16 before sm_80)"}
    from .rms_norm_kernel import WIDE_PER_THREAD, WIDE_ROWS

    hw = cfgmod.for_arch(arch).sm80
    wide = (f"; rows of {WIDE_ROWS[0]:,}-{WIDE_ROWS[1]:,} on GPUs above "
            f"{cfgmod.PER_ROW_MAX_GBPS_PER_SM:g} GB/s of DRAM an SM (the H200): "
            f"rows/rms_norm_wide, {WIDE_PER_THREAD} elements a thread")
    narrow = (f"; rows on a warp or a 64-thread block (at most 64 x the build's elements a "
              f"thread) on a build of as many 16-byte slot groups a thread as they need "
              f"(rows/{{op}}_narrow: rows of 768 and 1536 on {NARROW_PER_THREAD})")
    regs = (f"; rows of {cfgmod.REGS_ROWS[0]:,}-{cfgmod.REGS_ROWS[1]:,} on those GPUs"
            f"{{but}}: rows/{{op}}_regs (rows/{{op}}_regs32 where a row fills whole warps of "
            f"32-element threads), the row held in registers, a block a row")
    shifted = ("; misaligned rows (a width that is no 16-byte multiple, an offset start) in "
               "place where out's rows lie as x's: rows/softmax_shifted, "
               "rows/softmax_shifted_split and _whole for split rows and "
               "rows/softmax_shifted_regs for the register rows; split rows that shared "
               "memory holds whole, two blocks an SM, staged whole: rows/softmax_whole; "
               f"rows up to {cfgmod.LANES_ROWS:,} on 8, 16 or 32 lanes a row, several rows "
               "a warp, in registers: rows/softmax_lanes (misaligned: "
               "rows/softmax_shifted_lanes)")
    lanes = (f"; {{rows}} up to {{most:,}} on 8, 16 or 32 lanes a row, several rows a warp, "
             f"in registers: rows/{{op}}_lanes")
    return [(op, DTYPE[k], f"rows/{op}", why[hw or k != "bf16"] +
             (shifted if op == "softmax" else "") +
             (lanes.format(op=op, rows="rows", most=cfgmod.LANES_ROWS)
              if op in ("rms_norm", "rms_norm_residual", "layer_norm") else "") +
             (narrow.format(op=op) if op in NARROW_OPS else "") +
             (wide if hw and op == "rms_norm" and k in WIDE_KINDS else "") +
             (regs.format(op=op, but=" but rows of 8,192" if op == "rms_norm" else "")
              if hw and f"{op}_regs" in REGS_OPS and k in WIDE_KINDS
              else ""))
            for op in OPS for k in KINDS]


#: the layout the validation runs rms_norm's 64-element build in (a block of 128 threads a row)
WIDE_CONFIG = cfgmod.RowConfig("block", 128, per_thread=64)
#: the register-row layout, as the validation runs it
REGS_CONFIG = cfgmod.RowConfig("regs", 128, per_thread=64)


class RowCase:
    """One row op on random rows through kernels compiled for ``target`` as driver-JIT PTX."""

    def __init__(self, target: Arch, op: str, kind: str, rows: int, n: int):
        self.target, self.op, self.kind, self.rows, self.n = target, op, kind, rows, n
        self.name = f"rows/{op}/{kind}/{rows}x{n}"
        self.dtype = DTYPE[kind]

    def run(self, rng):
        import cupy
        import ml_dtypes
        import numpy as np

        from .. import launch
        from . import host
        from . import (layer_norm, layer_norm_ref, rms_norm, rms_norm_ref, softmax, softmax_ref,
                       swiglu, swiglu_ref)

        dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}[self.kind]
        x = (rng.standard_normal((self.rows, self.n)) * 2).astype(dt)
        w = (rng.standard_normal(self.n) + 1).astype(dt)
        b = rng.standard_normal(self.n).astype(dt)
        r = rng.standard_normal((self.rows, self.n)).astype(dt)
        X, Wd, B, Rd = (cupy.asarray(a) for a in (x, w, b, r))
        with host.target_arch(self.target), launch.driver_jit():
            if self.op == "rms_norm":
                got, want = rms_norm(X, Wd), rms_norm_ref(x, w)
            elif self.op == "rms_norm_wide":
                got, want = rms_norm(X, Wd, config=WIDE_CONFIG), rms_norm_ref(x, w)
            elif self.op == "rms_norm_regs":
                got, want = rms_norm(X, Wd, config=REGS_CONFIG), rms_norm_ref(x, w)
            elif self.op == "layer_norm_regs":
                got, want = layer_norm(X, Wd, B, config=REGS_CONFIG), layer_norm_ref(x, w, b)
            elif self.op == "softmax_regs":
                got, want = softmax(X, config=REGS_CONFIG), softmax_ref(x)
            elif self.op == "rms_norm_residual":
                got, want = rms_norm(X, Wd, residual=Rd).out, rms_norm_ref(x, w, residual=r)[0]
            elif self.op == "layer_norm":
                got, want = layer_norm(X, Wd, B), layer_norm_ref(x, w, b)
            elif self.op == "softmax":
                got, want = softmax(X), softmax_ref(x)
            else:
                got, want = swiglu(X, Rd), swiglu_ref(x, r)
        cupy.cuda.get_current_stream().synchronize()
        g = got.get().astype(np.float64)
        scale = np.abs(want).max(axis=-1, keepdims=True)
        err = float((np.abs(g - want) / scale).max())
        tol = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 2e-5}[self.kind]
        return err <= tol, err, tol, "" if err <= tol else f"max row-relative error {err:.3g}"


def validate_cases(target: Arch):
    # 37 x 3000: block layout; 2 x 40000: split layout (two passes); 300 x 100: warp layout
    # (a build of one slot group a lane), 300 x 768 (24 elements a lane: rows/<op>_narrow);
    # softmax on misaligned rows in place (rows/softmax_shifted): 300 x 197 (warps), 4 x 50257
    # (split; 16-bit rows of odd width start at every offset)
    wide = [RowCase(target, "rms_norm_wide", k, 37, 5000) for k in WIDE_KINDS] + \
        [RowCase(target, op, k, 37, 5000) for op in REGS_OPS for k in WIDE_KINDS] \
        if cfgmod.for_arch(target).sm80 else []
    return [RowCase(target, op, k, r, n) for op in OPS for k in KINDS
            for r, n in ((300, 100), (37, 3000), (2, 40000))] + \
        [RowCase(target, op, k, 300, 768) for op in NARROW_OPS for k in KINDS] + \
        [RowCase(target, "softmax", k, r, n) for k in KINDS for r, n in ((300, 197),
                                                                         (4, 50257))] + wide
