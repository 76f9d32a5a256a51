"""wgmma probes: A and B staged in shared memory in the canonical layouts, one wgmma per case.

The tiles are placed here from their shape (rows of the swizzle width, 8-row atoms, the XOR
of the 16-byte chunk), not from the descriptor fields the simulator decodes, so that the two
meet only in the result; the GPU run decides whether both match the hardware.
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from numba import cuda

from . import descriptors as desc_mod
from . import hopper, memory, wgmma
from .hopper_probes import HopperProbe
from .probes import BF16, _device, _register, _tf32_round

# ---------------------------------------------------------------------------------------------
# wgmma: cases staged from global memory into swizzled shared memory, one wgmma each
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One wgmma: ``a``/``b`` are (mn_major, swizzle bytes, k slice) of the shared tiles
    (``a`` None: A from registers). ``accumulate``: a second wgmma with scale_d = 1 adds
    A @ B to the first's D (D = 2 A @ B), through the accumulator registers it returned."""

    intr: object
    n: int
    a: tuple
    b: tuple
    accumulate: bool = False


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_VALUE = {"bf16": BF16, "f16": np.dtype(np.float16), "tf32": np.dtype(np.float32),
          "e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "e5m2": np.dtype(ml_dtypes.float8_e5m2),
          "s8": np.dtype(np.int8), "u8": np.dtype(np.uint8)}


def _values(rng, kind, shape, exact):
    if kind == "s8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    if kind == "u8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind in ("e4m3", "e5m2"):
        # small integers: FP8 wgmma accumulates with fewer bits than f32, so exact-mode sums
        # stay below 2^10
        v = rng.integers(-4, 5, shape) if exact else rng.standard_normal(shape) * 2
        return v.astype(_VALUE[kind])
    v = rng.integers(-8, 9, shape) * np.exp2(rng.integers(-3, 2, shape)) if exact \
        else rng.standard_normal(shape)
    if kind == "tf32":  # tf32-exact values: the reference need not guess how the core rounds
        return _tf32_round(v.astype(np.float32))
    return v.astype(_VALUE[kind])


def _tile_k(kind, major_span):
    mn_major, span, _ = major_span
    e, k = wgmma.KINDS[kind]
    return span // e if (not mn_major and span) else k


def _place(bits_tile, mn_major, span):
    """Shared-memory image of a (mn, kt) tile of raw element bits; returns (bytes, lbo, sbo)."""
    mn, kt = bits_tile.shape
    e = bits_tile.dtype.itemsize
    r = np.arange(mn)[:, None]
    c = np.arange(kt)[None, :]
    if not mn_major and span:  # one row of `span` bytes per mn, atoms of 8 rows stacked
        off, lbo, sbo, size = r * span + c * e, 16, 8 * span, mn * span
    elif not mn_major:  # 8x16 B core matrices, MN-adjacent ones 128 B apart
        col = mn // 8 * 128
        off = (r % 8) * 16 + (r // 8) * 128 + (c * e // 16) * col + c * e % 16
        lbo, sbo, size = col, 128, mn * kt * e
    elif span:  # rows of `span` bytes along MN, one per k; MN blocks kt rows apart
        per = span // e
        off = (r // per) * (kt * span) + c * span + (r % per) * e
        lbo, sbo, size = kt * span, 8 * span, -(-mn // per) * kt * span
    else:
        t = 16 // e
        col = mn // t * 128
        off = (r % t) * e + (r // t) * 128 + (c % 8) * 16 + (c // 8) * col
        lbo, sbo, size = col, 128, mn * kt * e
    if span:  # the 16-byte chunk moves by the row bits of its address (tile is atom-aligned)
        off = off ^ (((off >> 7) & (span // 16 - 1)) << 4)
    image = np.zeros(size, np.uint8)
    raw = bits_tile.view(np.uint8).reshape(mn, kt, e)
    image[off[..., None] + np.arange(e)] = raw
    return image, lbo, sbo


def _layout_of(c: Case):
    """(A kind, B kind, K, accumulator kind) of a case's instruction."""
    ex = c.intr.spec.extra
    return ex["a_kind"], ex["b_kind"], ex["k"], ex["acc"]


def _images(cases, tiles):
    """The staged image (uint32) and each operand's descriptor arguments."""
    parts, where, off = [], [], 0
    for c, (a_bits, b_bits) in zip(cases, tiles):
        entry = []
        for spec_, bits_ in ((c.a, a_bits), (c.b, b_bits)):
            if spec_ is None:
                entry.append(None)
                continue
            mn_major, span, ks = spec_
            img, lbo, sbo = _place(bits_, mn_major, span)
            k = _layout_of(c)[2]
            start = off + ks * k * bits_.dtype.itemsize
            entry.append((start, lbo, sbo, desc_mod.swizzle_code(span)))
            parts.append((off, img))
            off = -(-(off + img.size) // 1024) * 1024
        where.append(entry)
    image = np.zeros(max(off, 4), np.uint8)
    for o, img in parts:
        image[o:o + img.size] = img
    return image.view(np.uint32), where


def _pack_registers(a_bits, esize):
    """Each thread's 4 A registers (uint32[128, 4]) from the A tile, by the wgmma A layout."""
    layout = wgmma.A_LAYOUTS[esize]
    per = 4 // esize
    regs = np.zeros((128, 4), np.uint64)
    for t in range(128):
        for i in range(4 * per):
            regs[t, i // per] |= np.uint64(int(a_bits[layout(t, i)])) << np.uint64(8 * esize * (i % per))
    return regs.astype(np.uint32)


def _kernel_for(cases, where):
    """Generated source: numba needs each case's constants and tuple lengths spelt out."""
    ns = {"cuda": cuda, "np": np, "smem_addr": memory.smem_addr, "smem_desc": desc_mod.smem_desc,
          "fence_proxy_async": hopper.fence_proxy_async, "wg_fence": wgmma.wgmma_fence,
          "commit": wgmma.wgmma_commit_group, "wait": wgmma.wgmma_wait_group,
          "acc_rc": _device(wgmma.acc_m64nN)}
    args = [f"A{i}, B{i}" + (f", R{i}" if c.a is None else "") for i, c in enumerate(cases)]
    outs = [f"D{i}" for i in range(len(cases))]
    src = [f"def kernel(img, {', '.join(args)}, {', '.join(outs)}):",
           "    sh = cuda.shared.array(0, np.uint8)",
           "    sh32 = cuda.shared.array(0, np.uint32)",
           "    t = cuda.threadIdx.x",
           "    pad = (1024 - smem_addr(sh, 0) % 1024) % 1024",
           "    for w in range(t, img.size, 128):",
           "        sh32[pad // 4 + w] = img[w]",
           "    fence_proxy_async()  # the generic-proxy stores, before wgmma reads them",
           "    cuda.syncthreads()",
           "    base = smem_addr(sh, 0) + pad"]
    for i, (c, (wa, wb)) in enumerate(zip(cases, where)):
        nregs = c.n // 2
        acc_t = _layout_of(c)[3]
        ns[f"wg{i}"] = c.intr
        ns[f"fop{i}"] = wgmma.wgmma_fence_operand_s32 if acc_t == "s32" else \
            wgmma.wgmma_fence_operand_f32
        ns[f"zeros{i}"] = wgmma.zero_accumulator(nregs, np.int32 if acc_t == "s32" else np.float32)
        if wa is None:  # A from registers, packed on the host by the documented layout
            src.append(f"    a = (R{i}[t, 0], R{i}[t, 1], R{i}[t, 2], R{i}[t, 3])")
        else:
            src.append(f"    a = smem_desc(base + {wa[0]}, {wa[1]}, {wa[2]}, {wa[3]}, 0)")
        src.append(f"    b = smem_desc(base + {wb[0]}, {wb[1]}, {wb[2]}, {wb[3]}, 0)")
        trans = ""
        if wgmma.KINDS[_layout_of(c)[0]][0] == 2:
            trans = (f", {int(c.b[0])}" if wa is None else f", {int(c.a[0])}, {int(c.b[0])}")
        src += [f"    acc = fop{i}(zeros{i}())", "    wg_fence()",
                f"    acc = wg{i}(acc, a, b, 0{trans})"]
        if c.accumulate:
            src.append(f"    acc = wg{i}(acc, a, b, 1{trans})")
        src += ["    commit()", "    wait(0)", f"    acc = fop{i}(acc)",
                f"    for j in range({nregs}):", f"        D{i}[acc_rc(t, j)] = acc[j]"]
    exec("\n".join(src), ns)  # noqa: S102 - source built above from fixed templates
    return cuda.jit(ns["kernel"])


def make_wgmma_probe(name, cases, tolerance):
    """A probe running ``cases`` in one kernel of one warpgroup."""
    shapes = []
    for c in cases:
        a_kind, b_kind, k, acc = _layout_of(c)
        kt_a = k if c.a is None else _tile_k(a_kind, c.a)
        shapes.append((a_kind, b_kind, k, acc, kt_a, _tile_k(b_kind, c.b)))
    # where each operand lands depends on the shapes only: fix it once, with empty tiles
    tiles0 = [(np.zeros((64, s[4]), _BITS[wgmma.KINDS[s[0]][0]]),
               np.zeros((c.n, s[5]), _BITS[wgmma.KINDS[s[1]][0]])) for c, s in zip(cases, shapes)]
    image0, where = _images(cases, tiles0)
    kernel = _kernel_for(cases, where)

    def make_inputs(rng, exact):
        inp, tiles = {}, []
        for i, (c, (a_kind, b_kind, k, acc, kt_a, kt_b)) in enumerate(zip(cases, shapes)):
            a = _values(rng, a_kind, (64, kt_a), exact)
            b = _values(rng, b_kind, (c.n, kt_b), exact)  # B stored transposed: (N, K)
            ab = a.view(_BITS[a.dtype.itemsize])
            bb = b.view(_BITS[b.dtype.itemsize])
            tiles.append((ab, bb))
            inp[f"A{i}"], inp[f"B{i}"] = ab, bb
            if c.a is None:
                inp[f"R{i}"] = _pack_registers(ab, ab.dtype.itemsize)
        image, _ = _images(cases, tiles)
        return {"img": image, **inp}

    def outputs(inp):
        return {f"D{i}": np.empty((64, c.n), np.int32 if s[3] == "s32" else np.float32)
                for i, (c, s) in enumerate(zip(cases, shapes))}

    def reference(inp):
        out = {}
        for i, (c, (a_kind, b_kind, k, acc, kt_a, kt_b)) in enumerate(zip(cases, shapes)):
            ka = 0 if c.a is None else c.a[2] * k
            kb = c.b[2] * k
            A = inp[f"A{i}"].view(_VALUE[a_kind])[:, ka:ka + k]
            B = inp[f"B{i}"].view(_VALUE[b_kind])[:, kb:kb + k].T
            times = 2 if c.accumulate else 1
            if acc == "s32":
                D = times * (A.astype(np.int64) @ B.astype(np.int64))
                out[f"D{i}"] = ((D + 2**31) % 2**32 - 2**31).astype(np.int32)
            else:
                D = times * (A.astype(np.float64) @ B.astype(np.float64))
                out[f"D{i}"] = D.astype(np.float32)
        return out

    covers = tuple(sorted({c.intr.spec.name for c in cases} | {
        "wgmma_fence", "wgmma_commit_group", "wgmma_wait_group", "smem_addr",
        "fence_proxy_async"} | {f"wgmma_fence_operand_{s[3]}" for s in shapes}))
    return HopperProbe(name, covers, kernel, make_inputs, outputs, reference, threads=128,
                       shared_bytes=image0.nbytes + 1024,
                       tolerance={f"D{i}": tolerance for i in range(len(cases))})


def _w(a, b, acc, src):
    return wgmma.WGMMA[(a, b, acc, src)]


K, MN = False, True  # operand majorness
_WGMMA_PROBES = {
    # N = 8, 64, 128, 256 across A/B sources, all four layout types and both majors
    "wgmma_bf16": ([Case(_w("bf16", "bf16", "f32", "ss"), 8, (K, 0, 0), (K, 0, 0)),
                    Case(_w("bf16", "bf16", "f32", "ss"), 64, (K, 128, 1), (MN, 128, 0), True),
                    Case(_w("bf16", "bf16", "f32", "rs"), 128, None, (K, 64, 1), True),
                    Case(_w("bf16", "bf16", "f32", "ss"), 256, (MN, 32, 0), (K, 32, 0))], 1e-5),
    "wgmma_f16": ([Case(_w("f16", "f16", "f32", "ss"), 256, (K, 128, 3), (K, 128, 2), True),
                   Case(_w("f16", "f16", "f32", "rs"), 8, None, (MN, 0, 0))], 1e-5),
    "wgmma_tf32": ([Case(_w("tf32", "tf32", "f32", "ss"), 128, (K, 128, 2), (K, 128, 1)),
                    Case(_w("tf32", "tf32", "f32", "rs"), 16, None, (K, 0, 0), True)], 1e-5),
    "wgmma_fp8": ([Case(_w("e4m3", "e4m3", "f32", "ss"), 256, (K, 128, 1), (K, 128, 3), True),
                   Case(_w("e4m3", "e4m3", "f32", "rs"), 16, None, (K, 32, 0)),
                   Case(_w("e5m2", "e5m2", "f32", "ss"), 64, (K, 64, 1), (K, 64, 0)),
                   Case(_w("e5m2", "e5m2", "f32", "rs"), 8, None, (K, 0, 0), True),
                   Case(_w("e4m3", "e5m2", "f32", "ss"), 24, (K, 0, 0), (K, 32, 0)),
                   Case(_w("e4m3", "e5m2", "f32", "rs"), 128, None, (K, 128, 2)),
                   Case(_w("e5m2", "e4m3", "f32", "ss"), 40, (K, 32, 0), (K, 0, 0)),
                   Case(_w("e5m2", "e4m3", "f32", "rs"), 8, None, (K, 64, 1))], 2e-3),
    "wgmma_int8": ([Case(_w("s8", "s8", "s32", "ss"), 256, (K, 128, 2), (K, 128, 1), True),
                    Case(_w("s8", "s8", "s32", "rs"), 8, None, (K, 0, 0)),
                    Case(_w("u8", "u8", "s32", "ss"), 48, (K, 64, 1), (K, 32, 0)),
                    Case(_w("u8", "u8", "s32", "rs"), 16, None, (K, 128, 3), True),
                    Case(_w("s8", "u8", "s32", "ss"), 24, (K, 0, 0), (K, 64, 0)),
                    Case(_w("s8", "u8", "s32", "rs"), 128, None, (K, 32, 0)),
                    Case(_w("u8", "s8", "s32", "ss"), 8, (K, 32, 0), (K, 0, 0), True),
                    Case(_w("u8", "s8", "s32", "rs"), 64, None, (K, 128, 0))], 0),
}
for _name, (_cases, _tol) in _WGMMA_PROBES.items():
    _register(make_wgmma_probe(_name, _cases, _tol))
