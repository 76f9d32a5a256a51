"""Row-kernel test cases shared by the simulator and GPU tests: inputs, float64 references,
per-dtype tolerances, layouts, and a checker that reports where a result is wrong.

A case is ``(op, dtype, shape, layout, special, variant)``. Inputs are fresh random every
run; ``out`` arrays are poisoned with NaN before the call, so an element the kernel never
writes shows up as a NaN where the reference is finite.
"""
import os

import ml_dtypes
import numpy as np

import nbkernels
from nbkernels.rows import (RowConfig, layer_norm_ref, rms_norm_ref, softmax_ref, swiglu_ref)

DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
# relative to the row's largest reference magnitude: a few units of the output's last place,
# plus float32 statistics over long rows
TOLERANCES = {"float32": 2e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
VARIANTS = {None: None, "warp": RowConfig("warp", 32, 4), "block": RowConfig("block", 64),
            "split": RowConfig("split", 32), "split256": RowConfig("split", 256),
            # the split layout's two passes where softmax would stage the row whole
            # (ENV_VARIANTS: NBKERNELS_SPLIT_PASSES=2; perf-notes r62)
            "split2p": RowConfig("split", 32), "split256_2p": RowConfig("split", 256),
            # blocks looping over rows: fewer blocks than rows, rings of 1, 2 or 4 buffers
            "loop1": RowConfig("block", 64, blocks=3, buffers=1),
            "loop2": RowConfig("block", 64, blocks=2, buffers=2),
            "loop4": RowConfig("block", 64, blocks=2, buffers=4),
            # blocks of two rows in row order (the H200's layout, perf-notes r18): 7 rows on
            # 4 blocks of (0, 4), (1, 5), (2, 6), (3)
            "pairs": RowConfig("block", 64, blocks=4, buffers=2),
            "pairs1": RowConfig("block", 128, blocks=4, buffers=1),  # one buffer (r24, r27)
            "warploop4": RowConfig("warp", 32, 2, blocks=1, buffers=4),
            "oneblock": RowConfig("block", 64, blocks=1, buffers=2),
            "warploop": RowConfig("warp", 32, 2, blocks=2, buffers=2),
            "splitloop": RowConfig("split", 32, blocks=2, buffers=2),  # swiglu loops chunks
            # rms_norm's 64-element 16-bit build (a block per row, looping, split)
            "wide": RowConfig("block", 128, per_thread=64),
            "wideloop": RowConfig("block", 64, blocks=2, buffers=2, per_thread=64),
            "widesplit": RowConfig("split", 32, per_thread=64),
            # the register-row layout (16-bit rows on sm_80+; perf-notes r43): a block of 128
            # threads a row (rows up to 8192), of 64 (up to 4096), of 32 (one warp: no barrier)
            "regs": RowConfig("regs", 128), "regs64": RowConfig("regs", 64),
            "regs32": RowConfig("regs", 32),
            # a staged block of three warps (not a power of two: rows that fill no power of
            # two of threads take the fewest whole warps, perf-notes r47), looping
            "block96loop": RowConfig("block", 96, blocks=2, buffers=1),
            # softmax's lanes layout (perf-notes r63): 8, 16 or 32 lanes a row, several rows
            # a warp, 32 elements a thread; a block of 16 rows, of 4, of one warp of 4 rows
            "lanes8": RowConfig("lanes", 8, 16), "lanes16": RowConfig("lanes", 16, 4),
            "lanes32": RowConfig("lanes", 32, 2), "lanes8w": RowConfig("lanes", 8, 4)}


def _values(rng, shape, special):
    x = rng.standard_normal(shape) * 2.0
    if special == "big":  # softmax must subtract the max first: exp(1e4) overflows
        x = x * 5e3
    elif special == "near1e4":  # values 1e4 apart from 0 but O(1) apart from each other: every
        x = x + 1e4  # element matters, and exp's argument must come out exact (float32)
    elif special == "huge":  # softmax near float32's limit: maxima of 3e38 and 1.5e38 (max *
        flat = x.reshape(-1, shape[-1])  # log2e overflows or is off by ~1e31), every value of
        flat[:, :] *= 1e37  # row 2 near -3e38; the other values ~1e37 (their exp 0)
        flat[0, :: max(1, shape[-1] // 3)] = 3e38
        if flat.shape[0] > 1:
            flat[1, 1::4] = 1.5e38
        if flat.shape[0] > 2:
            flat[2, :] = -3e38 + np.abs(flat[2, :])  # every value near -3e38
    elif special == "equal":
        x = np.broadcast_to(x[..., :1], shape).copy()
    elif special == "offset":  # a mean far from 0 against the spread: variance cancellation
        x = x + 1e3
    elif special == "firsts":  # layer_norm's worst case for a thread's one-pass sums: the
        # first element of each thread's first group (every 4th of the row's first eighth on
        # whole rows) 10 away from values 1e-2 apart around 1e3 (perf-notes r29)
        x = 1e3 + x * 5e-3
        n = shape[-1]
        x[..., : max(1, n // 8): 4] += 10.0
    elif special == "warpinf":  # float32 rows on 64 threads: the second warp's 16-byte
        idx = np.arange(shape[-1])  # groups all -inf, the first warp's finite
        x[..., (idx // 4) % 64 >= 32] = -np.inf
    elif special == "nonfinite":
        flat = x.reshape(-1, shape[-1])
        flat[0, min(3, shape[-1] - 1)] = np.nan
        if flat.shape[0] > 1:
            flat[1, :] = -np.inf
        if flat.shape[0] > 2:
            flat[2, 0] = np.inf
    return x


def _layout(x, layout, fw):
    """``x`` (C-contiguous NumPy) moved to framework ``fw`` and laid out as the case asks."""
    if fw == "torch":
        import torch

        t = (torch.from_numpy(x.view(np.int16)).view(torch.bfloat16) if x.dtype == DTYPES["bfloat16"]
             else torch.from_numpy(x)).cuda()
        if layout == "contig":
            return t
        if layout == "rowstride":
            wide = torch.zeros(t.shape[:-1] + (t.shape[-1] + 3,), dtype=t.dtype, device="cuda")
            wide[..., : t.shape[-1]] = t
            return wide[..., : t.shape[-1]]
        if layout == "misaligned":
            buf = torch.empty(t.numel() + 1, dtype=t.dtype, device="cuda")
            v = buf[1:].view(t.shape)
            v.copy_(t)
            return v
        if layout == "transposed":
            return t.transpose(-1, -2).contiguous().transpose(-1, -2) if t.ndim > 1 else t
        raise ValueError(layout)
    if fw == "cupy":
        import cupy as xp

        x = xp.asarray(x)
    else:
        xp = np
    if layout == "contig":
        return x
    if layout == "rowstride":  # rows of a wider array: stride > n, unaligned when odd
        wide = xp.zeros(x.shape[:-1] + (x.shape[-1] + 3,), x.dtype)
        wide[..., : x.shape[-1]] = x
        return wide[..., : x.shape[-1]]
    if layout == "misaligned":  # starts one element into its allocation
        buf = xp.empty(x.size + 1, x.dtype)
        v = buf[1:].reshape(x.shape)
        v[...] = x
        return v
    if layout == "transposed":  # last-axis stride != 1: copied once by the launcher
        return xp.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2) if x.ndim > 1 else x
    raise ValueError(layout)


def to_numpy(a):
    if type(a).__module__.startswith("torch"):
        import torch

        a = a.detach().cpu()
        return a.view(torch.int16).numpy().view(DTYPES["bfloat16"]) if a.dtype == torch.bfloat16 \
            else a.numpy()
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)


def make(op, dtype, shape, layout, special, rng, fw="numpy"):
    """(args, kwargs, reference outputs as a tuple of float64 arrays); references are
    computed from the NumPy values before they move to ``fw``."""
    dt = DTYPES[dtype]
    n = shape[-1]
    xh = _values(rng, shape, special).astype(dt)
    x = _layout(xh, layout, fw)
    mv = lambda a: _layout(a, "contig", fw)  # noqa: E731
    w = (rng.standard_normal(n) + 1).astype(dt)
    if op == "rms_norm":
        return (x, mv(w)), {"eps": 1e-6}, (rms_norm_ref(xh, w, 1e-6),)
    if op == "rms_norm_residual":
        rh = rng.standard_normal(shape).astype(dt)
        y, h = rms_norm_ref(xh, w, 1e-6, residual=rh)
        return (x, mv(w)), {"eps": 1e-6, "residual": _layout(rh, layout, fw)}, \
            (y, h.astype(np.float64))
    if op == "layer_norm":
        # a float32 bias beside a 16-bit x and weight; "bias16": the bias in x's dtype;
        # "vecs32": both float32 (the row groups of a block share them, perf-notes r35)
        b = rng.standard_normal(n).astype(dt if special == "bias16" else np.float32)
        if special == "vecs32":
            w = w.astype(np.float32)
        return (x, mv(w), mv(b)), {"eps": 1e-5}, (layer_norm_ref(xh, w, b, 1e-5),)
    if op == "softmax":
        return (x,), {}, (softmax_ref(xh),)
    if op == "swiglu":
        uh = rng.standard_normal(shape).astype(dt)
        return (x, _layout(uh, layout, fw)), {}, (swiglu_ref(xh, uh),)
    if op == "swiglu_packed":
        return (x,), {}, (swiglu_ref(xh),)
    raise ValueError(op)


#: variants run with environment variables set (and no config, but for the split ones):
#: "regsauto", the register-row layout as the automatic choice takes it
#: (NBKERNELS_ROW_VARIANT=regs; config.regs_config: the fewest whole warps covering the row, at
#: the build leaving fewer elements past its end); "stagedauto", the staged layouts the
#: automatic choice takes where no register rows are (NBKERNELS_ROWS_LOOP=2: the H100's side
#: for 16-bit rows of 2049-8192, the narrow rows' builds on 64 threads, perf-notes r55);
#: "split2p" and "split256_2p", the split configs with their two passes where softmax would
#: stage the row whole (NBKERNELS_SPLIT_PASSES=2, r62); "lanesauto", softmax's lanes layout as
#: the automatic choice takes it (NBKERNELS_ROW_VARIANT=lanes: config.lanes_config's lanes and
#: elements a thread; misaligned rows in place, r63)
ENV_VARIANTS = {"regsauto": {"NBKERNELS_ROW_VARIANT": "regs"},
                "stagedauto": {"NBKERNELS_ROWS_LOOP": "2"},
                "split2p": {"NBKERNELS_SPLIT_PASSES": "2"},
                "split256_2p": {"NBKERNELS_SPLIT_PASSES": "2"},
                "lanesauto": {"NBKERNELS_ROW_VARIANT": "lanes"}}


def call(op, args, kwargs, outs, variant):
    fn = {"rms_norm_residual": "rms_norm", "swiglu_packed": "swiglu"}.get(op, op)
    kw = dict(kwargs, config=VARIANTS.get(variant))
    if outs is not None:
        kw["out"] = outs[0]
        if op == "rms_norm_residual":
            kw["residual_out"] = outs[1]
    env = ENV_VARIANTS.get(variant, {})
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        res = getattr(nbkernels, fn)(*args, **kw)
    finally:
        for k, v in old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v
    return tuple(res) if isinstance(res, tuple) else (res,)


def mismatch(name, got, want, dtype):
    """None if ``got`` matches ``want`` (float64) within the dtype's tolerance, else where."""
    g = np.asarray(got).astype(np.float64)
    if g.shape != want.shape:
        return f"{name}: shape {g.shape}, expected {want.shape}"
    tol = TOLERANCES[dtype]
    w2 = want.reshape(-1, want.shape[-1]) if want.ndim else want.reshape(1, 1)
    with np.errstate(invalid="ignore"):
        scale = np.nanmax(np.where(np.isfinite(w2), np.abs(w2), 0), axis=-1, keepdims=True)
        scale = np.broadcast_to(np.maximum(scale, 1e-30), w2.shape).reshape(want.shape)
        # the result was rounded to the output dtype: compare against the rounded reference
        wr = want.astype(DTYPES[dtype]).astype(np.float64)
        ok = (np.abs(g - wr) <= tol * scale) | (np.isnan(g) & np.isnan(wr)) | (g == wr)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    return (f"{name}: {len(bad)} of {ok.size} elements differ; first at {idx}: expected "
            f"{wr[idx]!r}, got {g[idx]!r} (tolerance {tol} x row scale {scale[idx]:.3g})")


def poisoned(shape, dtype, fw):
    out = np.full(shape, np.nan, DTYPES[dtype])
    return _layout(out, "contig", fw)


def run_case(case, rng, fw="numpy", with_out=True):
    """Failures (strings) of one case: called with poisoned ``out`` arrays, then without."""
    op, dtype, shape, layout, special, variant = case
    args, kwargs, refs = make(op, dtype, tuple(shape), layout, special, rng, fw)
    fails = []
    for given in ((True, False) if with_out else (False,)):
        outs = [poisoned(s, dtype, fw) for s in out_shapes(op, shape)] if given else None
        got = call(op, args, kwargs, outs, variant)
        for i, (g, want) in enumerate(zip(got, refs)):
            if outs is not None and g is not outs[i]:
                fails.append(f"{case}: result {i} is not the out array passed")
            if type(g).__module__.split(".")[0] != (fw if fw != "numpy" else "numpy"):
                fails.append(f"{case}: result {i} is a {type(g).__module__} array, not {fw}")
            m = mismatch(f"{case} out={given} result {i}", to_numpy(g), want, dtype)
            if m:
                fails.append(m)
    return fails


def out_shapes(op, x_shape):
    n = x_shape[-1]
    if op == "swiglu_packed":
        return [tuple(x_shape[:-1]) + (n // 2,)]
    if op == "rms_norm_residual":
        return [tuple(x_shape), tuple(x_shape)]
    return [tuple(x_shape)]
