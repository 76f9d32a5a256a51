"""One small kernel per shipped intrinsic, with its inputs and an independent NumPy reference.

The same probes run in numba's simulator (CI), on a GPU (validation), and compile to
PTX/SASS for every arch (CI). A probe is launched as one block; ``run(probe, inputs)``
returns the output arrays. References are written from the PTX ISA's definitions with
vectorised NumPy, independently of the simulator code in :mod:`.mma` and :mod:`.ldmatrix`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
from numba import cuda

from . import convert, cp_async, ldmatrix, memory, mma, warp

BF16 = np.dtype(ml_dtypes.bfloat16)


@dataclass
class Probe:
    name: str
    covers: tuple  # intrinsic names exercised
    kernel: Callable  # cuda.jit kernel
    make_inputs: Callable  # (rng, exact) -> dict of input arrays
    outputs: Callable  # inputs -> dict of zero-shaped output arrays (poisoned before launch)
    reference: Callable  # inputs -> dict of expected outputs
    threads: int = 32
    shared_bytes: int = 0
    tolerance: dict = None  # output name -> relative tolerance when inputs are not exact
    signature: tuple = ()  # numba types of (inputs..., outputs...) for compile_ptx
    keep_initial: tuple = ()  # outputs whose initial contents are part of the test (not poisoned)


PROBES: dict[str, Probe] = {}


def _device(fn):
    # inline="always": numba-cuda 0.30 compiles separately-compiled device functions for the
    # *current device's* arch (and cannot without a GPU); inlined ones are typed and lowered
    # within the kernel, for the arch the kernel is compiled for.
    return cuda.jit(device=True, inline="always")(fn)


def _register(p: Probe):
    PROBES[p.name] = p
    return p


def _poison(a: np.ndarray):
    if a.dtype.kind == "f":
        a[...] = np.nan
    else:
        a.view(np.uint8)[...] = 0xA5


# ---------------------------------------------------------------------------------------
# mma.sync: fragments loaded from global arrays by the documented layouts
# ---------------------------------------------------------------------------------------
def _element_kind(ab):
    return {"f16": np.float16, "bf16": BF16, "tf32": np.float32, "s8": np.int8,
            "u8": np.uint8, "f64": np.float64}[ab]


def _mma_values(rng, ab, shape, exact):
    if ab in ("s8",):
        return rng.integers(-128, 128, shape).astype(np.int8)
    if ab in ("u8",):
        return rng.integers(0, 256, shape).astype(np.uint8)
    if exact:  # small integers times powers of two: every product and sum is exact
        v = rng.integers(-8, 9, shape) * np.exp2(rng.integers(-3, 2, shape))
    else:
        v = rng.standard_normal(shape)
    return v.astype(_element_kind(ab))


def _tf32_round(x32):
    b = x32.view(np.uint32).astype(np.uint64)
    return ((b + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def _as_f64(x, ab):
    if ab == "tf32":
        return _tf32_round(x).astype(np.float64)
    return x.astype(np.float64)


def _make_mma_probe(intr):
    ex = intr.spec.extra
    (m, n, k), ab, acc = ex["shape"], ex["ab"], ex["acc"]
    a_regs, b_regs, c_regs = (op.count for op in intr.spec.inputs)
    la = _device(ex["a_layout"])
    lb = _device(ex["b_layout"])
    lc = _device(ex["acc_layout"])
    per_reg = {"f16": 2, "bf16": 2, "tf32": 1, "s8": 4, "u8": 4, "f64": 1}[ab]

    def make_opreg(layout):
        if per_reg == 2:
            @_device
            def opreg(X, lane, r):
                lo = np.uint32(X[layout(lane, 2 * r)])
                return lo | (np.uint32(X[layout(lane, 2 * r + 1)]) << 16)
        elif per_reg == 4:
            @_device
            def opreg(X, lane, r):
                v = np.uint32(0)
                for i in range(4):
                    v |= (np.uint32(X[layout(lane, 4 * r + i)]) & np.uint32(0xFF)) << (8 * i)
                return v
        elif ab == "tf32":
            @_device
            def opreg(X, lane, r):
                return convert.f32_to_tf32(X[layout(lane, r)])
        else:
            @_device
            def opreg(X, lane, r):
                return X[layout(lane, r)]
        return opreg

    def loader(layout, count):
        opreg = make_opreg(layout)
        if count == 8:  # A of m16n8k16.f64
            @_device
            def load(X, lane):
                return (opreg(X, lane, 0), opreg(X, lane, 1), opreg(X, lane, 2), opreg(X, lane, 3),
                        opreg(X, lane, 4), opreg(X, lane, 5), opreg(X, lane, 6), opreg(X, lane, 7))
        elif count == 4:
            @_device
            def load(X, lane):
                return (opreg(X, lane, 0), opreg(X, lane, 1), opreg(X, lane, 2), opreg(X, lane, 3))
        elif count == 2:
            @_device
            def load(X, lane):
                return (opreg(X, lane, 0), opreg(X, lane, 1))
        else:
            @_device
            def load(X, lane):
                return opreg(X, lane, 0)
        return load

    load_a, load_b = loader(la, a_regs), loader(lb, b_regs)

    if acc == "f16":  # C and D as uint16 bit patterns, two per register
        @_device
        def load_c(C, lane):
            return (np.uint32(C[lc(lane, 0)]) | (np.uint32(C[lc(lane, 1)]) << 16),
                    np.uint32(C[lc(lane, 2)]) | (np.uint32(C[lc(lane, 3)]) << 16))

        @_device
        def store_d(D, lane, d):
            for r in range(2):
                D[lc(lane, 2 * r)] = np.uint16(d[r] & np.uint32(0xFFFF))
                D[lc(lane, 2 * r + 1)] = np.uint16(d[r] >> 16)
    else:
        if c_regs == 4:
            @_device
            def load_c(C, lane):
                return (C[lc(lane, 0)], C[lc(lane, 1)], C[lc(lane, 2)], C[lc(lane, 3)])
        else:
            @_device
            def load_c(C, lane):
                return (C[lc(lane, 0)], C[lc(lane, 1)])

        @_device
        def store_d(D, lane, d):
            for i in range(c_regs):
                D[lc(lane, i)] = d[i]

    @cuda.jit
    def kernel(A, B, C, D):
        lane = cuda.threadIdx.x
        d = intr(load_a(A, lane), load_b(B, lane), load_c(C, lane))
        store_d(D, lane, d)

    acc_np = {"f32": np.float32, "f16": np.float16, "s32": np.int32, "f64": np.float64}[acc]

    def bits_of(x):
        return x.view(np.uint16) if x.dtype in (np.float16, BF16) else x

    def make_inputs(rng, exact):
        A = _mma_values(rng, ab, (m, k), exact)
        B = _mma_values(rng, ab, (k, n), exact)
        if acc == "s32":
            C = rng.integers(-2**20, 2**20, (m, n)).astype(np.int32)
        elif exact:
            C = (rng.integers(-64, 65, (m, n)) * 0.25).astype(acc_np)
        else:
            C = rng.standard_normal((m, n)).astype(acc_np)
        return {"A": bits_of(A), "B": bits_of(B), "C": bits_of(C)}

    def decode(x, kind):
        if x.dtype == np.uint16:
            return x.view(np.float16 if kind == "f16" else BF16)
        return x

    def outputs(inp):
        return {"D": np.empty((m, n), inp["C"].dtype)}

    def reference(inp):
        A = _as_f64(decode(inp["A"], ab), ab)
        B = _as_f64(decode(inp["B"], ab), ab)
        C = decode(inp["C"], acc)
        if acc == "s32":
            D = A.astype(np.int64) @ B.astype(np.int64) + C.astype(np.int64)
            return {"D": ((D + 2**31) % 2**32 - 2**31).astype(np.int32)}
        D = (A @ B + C.astype(np.float64)).astype(acc_np)
        return {"D": D.view(np.uint16) if acc == "f16" else D}

    tol = {"f32": 1e-5, "f16": 2e-3, "f64": 1e-13, "s32": 0}[acc]
    if ab == "bf16" or ab == "tf32":
        tol = max(tol, 1e-5)
    return Probe(intr.spec.name, (intr.spec.name,) + (("f32_to_tf32",) if ab == "tf32" else ()),
                 kernel, make_inputs, outputs, reference, tolerance={"D": tol})


for _name in mma.__all__:
    _register(_make_mma_probe(getattr(mma, _name)))


# ---------------------------------------------------------------------------------------
# ldmatrix: 4 matrices of 8x8 b16 in dynamic shared memory, 16-byte rows
# ---------------------------------------------------------------------------------------
def _make_ldmatrix_probe(intr, nmat, trans):
    if nmat == 1:
        @_device
        def emit(out, lane, d):
            out[lane, 0] = d
    else:
        @_device
        def emit(out, lane, d):
            for j in range(nmat):
                out[lane, j] = d[j]

    @cuda.jit
    def kernel(M, out):
        sh = cuda.shared.array(0, np.uint16)
        lane = cuda.threadIdx.x
        for c in range(8):
            sh[lane * 8 + c] = M[lane, c]
        cuda.syncthreads()
        row = lane % (8 * nmat)
        d = intr(memory.smem_addr(sh, row * 8))
        emit(out, lane, d)

    def make_inputs(rng, exact):
        return {"M": rng.integers(0, 2**16, (32, 8)).astype(np.uint16)}

    def outputs(inp):
        return {"out": np.empty((32, nmat), np.uint32)}

    def reference(inp):
        M = inp["M"].astype(np.uint32).reshape(4, 8, 8)
        lane = np.arange(32)
        g, t = lane // 4, lane % 4
        out = np.empty((32, nmat), np.uint32)
        for j in range(nmat):
            mj = M[j].T if trans else M[j]
            out[:, j] = mj[g, 2 * t] | (mj[g, 2 * t + 1] << 16)
        return {"out": out}

    return Probe(intr.spec.name, (intr.spec.name, "smem_addr"), kernel, make_inputs, outputs,
                 reference, shared_bytes=32 * 8 * 2)


for _name in ldmatrix.__all__:
    _intr = getattr(ldmatrix, _name)
    _register(_make_ldmatrix_probe(_intr, int(_name[len("ldmatrix_x")]), _name.endswith("trans")))


# ---------------------------------------------------------------------------------------
# cp.async: two committed groups, zero-fill, wait_group(1) then wait_group(0) / wait_all
# ---------------------------------------------------------------------------------------
def _make_cp_async_probe(intr, size, use_wait_all):
    chunks = 4  # per thread per group
    per_thread = chunks * size
    name = f"{intr.spec.name}_{size}" + ("_wait_all" if use_wait_all else "")
    nthreads = 64

    @cuda.jit
    def kernel(src, src_sizes, first, second):
        sh = cuda.shared.array(0, np.uint8)
        tid = cuda.threadIdx.x
        half = nthreads * per_thread
        for g in range(2):
            for c in range(chunks):
                off = tid * per_thread + c * size
                intr(memory.smem_addr(sh, g * half + off),
                     memory.gmem_addr(src, g * half + off), size, src_sizes[g, tid, c])
            cp_async.cp_async_commit_group()
        cp_async.cp_async_wait_group(1)
        cuda.syncthreads()
        for b in range(per_thread):
            first[tid * per_thread + b] = sh[tid * per_thread + b]
        if use_wait_all:
            cp_async.cp_async_wait_all()
        else:
            cp_async.cp_async_wait_group(0)
        cuda.syncthreads()
        for b in range(per_thread):
            second[tid * per_thread + b] = sh[half + tid * per_thread + b]

    def make_inputs(rng, exact):
        src = rng.integers(1, 256, 2 * nthreads * per_thread).astype(np.uint8)
        src_sizes = rng.integers(0, size + 1, (2, nthreads, chunks)).astype(np.uint32)
        src_sizes[:, :, 0] = size  # always some full copies
        return {"src": src, "src_sizes": src_sizes}

    def outputs(inp):
        return {"first": np.empty(nthreads * per_thread, np.uint8),
                "second": np.empty(nthreads * per_thread, np.uint8)}

    def reference(inp):
        data = inp["src"].reshape(2, nthreads, chunks, size).copy()
        keep = np.arange(size)[None, None, None, :] < inp["src_sizes"][..., None]
        data[~keep] = 0
        data = data.reshape(2, -1)
        return {"first": data[0], "second": data[1]}

    covers = (intr.spec.name, "cp_async_commit_group", "cp_async_wait_group", "gmem_addr",
              "smem_addr") + (("cp_async_wait_all",) if use_wait_all else ())
    return Probe(name, covers, kernel, make_inputs, outputs, reference, threads=nthreads,
                 shared_bytes=2 * nthreads * per_thread)


for _size in (4, 8, 16):
    _register(_make_cp_async_probe(cp_async.cp_async_ca, _size, _size == 8))
_register(_make_cp_async_probe(cp_async.cp_async_cg, 16, True))
_register(_make_cp_async_probe(cp_async.cp_async_cg_pf256, 16, False))


# ---------------------------------------------------------------------------------------
# Conversions, vector loads/stores and addresses (64 threads, elementwise)
# ---------------------------------------------------------------------------------------
def _convert_inputs(rng, exact):
    x = rng.standard_normal(256).astype(np.float32) * np.exp2(rng.integers(-20, 20, 256))
    x = x.astype(np.float32)
    x[:4] = [np.inf, -np.inf, 0.0, -0.0]
    x[4:8] = [65504.0, 70000.0, 1e-8, 3.0e38]  # f16 max, f16 overflow, subnormal, bf16 round-up
    return {"x": x}


def _make_pack_probe(intr, kind):
    @cuda.jit
    def kernel(x, out):
        i = cuda.threadIdx.x
        for j in range(2):
            p = i * 2 + j
            out[p] = intr(x[2 * p], x[2 * p + 1])

    def reference(inp):
        dt = np.float16 if kind == "f16" else BF16
        with np.errstate(over="ignore"):  # 70000 -> f16 inf is part of the test
            h = inp["x"].astype(dt).view(np.uint16).astype(np.uint32)
        return {"out": h[0::2] | (h[1::2] << 16)}

    return Probe(intr.spec.name, (intr.spec.name,), kernel, _convert_inputs,
                 lambda inp: {"out": np.empty(128, np.uint32)}, reference, threads=64)


_register(_make_pack_probe(convert.pack_bf16x2, "bf16"))
_register(_make_pack_probe(convert.pack_f16x2, "f16"))


@cuda.jit
def _tf32_kernel(x, out):
    i = cuda.threadIdx.x
    for j in range(4):
        out[i * 4 + j] = convert.f32_to_tf32(x[i * 4 + j])


_register(Probe(
    "f32_to_tf32", ("f32_to_tf32",), _tf32_kernel, _convert_inputs,
    lambda inp: {"out": np.empty(256, np.uint32)},
    lambda inp: {"out": _tf32_round(inp["x"]).view(np.uint32)}, threads=64,
))


@cuda.jit
def _vector_kernel(src, dst, addr_deltas, rotated, pred_dst, cs_dst):
    i = cuda.threadIdx.x
    v = memory.ld_global_v4(memory.gmem_addr(src, i * 4))
    memory.st_global_v4(memory.gmem_addr(dst, 255 - (i * 4 + 3)), (v[3], v[2], v[1], v[0]))
    # every third lane's 16 bytes are left as they were
    memory.st_global_v4_if(memory.gmem_addr(pred_dst, i * 4), (v[1], v[0], v[3], v[2]),
                           (i % 3) != 0)
    memory.st_global_cs_v4_if(memory.gmem_addr(cs_dst, i * 4), (v[2], v[3], v[0], v[1]),
                              (i % 3) != 1)
    sh = cuda.shared.array(0, np.uint32)
    addr_deltas[0, i] = memory.smem_addr(sh, i) - memory.smem_addr(sh, 0)
    addr_deltas[1, i] = memory.gmem_addr(src, i) - memory.gmem_addr(src, 0)
    cuda.syncthreads()  # the address probe above read sh's addresses only; now fill it
    memory.st_shared_v4(memory.smem_addr(sh, i * 4), (v[1], v[2], v[3], v[0]))
    cuda.syncthreads()
    w = memory.ld_shared_v4(memory.smem_addr(sh, ((i + 1) % 64) * 4))  # the next lane's words
    for q in range(4):
        rotated[i * 4 + q] = w[q]


def _vector_reference(inp):
    src = inp["src"].reshape(64, 4)
    return {"dst": inp["src"][::-1].copy(),
            "addr_deltas": np.tile(np.arange(64, dtype=np.uint64) * 4, (2, 1)),
            "rotated": np.roll(src[:, [1, 2, 3, 0]], -1, axis=0).reshape(-1),
            "pred_dst": np.where((np.arange(64) % 3 != 0)[:, None], src[:, [1, 0, 3, 2]],
                                 np.uint32(0xDEADBEEF)).reshape(-1),
            "cs_dst": np.where((np.arange(64) % 3 != 1)[:, None], src[:, [2, 3, 0, 1]],
                               np.uint32(0xDEADBEEF)).reshape(-1)}


_register(Probe(
    "vector_and_addresses", ("ld_global_v4", "st_global_v4", "st_global_v4_if",
                             "st_global_cs_v4_if", "ld_shared_v4", "st_shared_v4", "gmem_addr",
                             "smem_addr"),
    _vector_kernel,
    lambda rng, exact: {"src": rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)},
    lambda inp: {"dst": np.empty(256, np.uint32), "addr_deltas": np.empty((2, 64), np.uint64),
                 "rotated": np.empty(256, np.uint32),
                 "pred_dst": np.full(256, 0xDEADBEEF, np.uint32),
                 "cs_dst": np.full(256, 0xDEADBEEF, np.uint32)},
    _vector_reference, threads=64, shared_bytes=64 * 16, keep_initial=("pred_dst", "cs_dst"),
))


@cuda.jit
def _scalar_kernel(x, h16, u, s, d, copies16, copies32, copies_s, copies_f, copies_d,
                   halves, floats, xbits, pred16, pred_s, pred_f, pred_zero, pred_u):
    i = cuda.threadIdx.x
    j = 63 - i
    memory.st_global_u16(memory.gmem_addr(copies16, j), memory.ld_global_u16(memory.gmem_addr(h16, i)))
    memory.st_global_u32(memory.gmem_addr(copies32, j), memory.ld_global_u32(memory.gmem_addr(u, i)))
    memory.st_global_s32(memory.gmem_addr(copies_s, j), memory.ld_global_s32(memory.gmem_addr(s, i)))
    memory.st_global_f32(memory.gmem_addr(copies_f, j), memory.ld_global_f32(memory.gmem_addr(x, i)))
    memory.st_global_f64(memory.gmem_addr(copies_d, j), memory.ld_global_f64(memory.gmem_addr(d, i)))
    halves[0, i] = convert.cvt_f32_to_bf16(x[i])
    halves[1, i] = convert.cvt_f32_to_f16(x[i])
    floats[0, i] = convert.f16_bits_to_f32(h16[i])
    floats[1, i] = convert.bits_to_f32(u[i])
    xbits[i] = convert.f32_to_bits(x[i])
    ok = (i % 3) != 0  # predicated accesses: every third element is neither read nor written
    memory.st_global_u16_if(memory.gmem_addr(pred16, i), memory.ld_global_u16_if(memory.gmem_addr(h16, i), ok), ok)
    memory.st_global_s32_if(memory.gmem_addr(pred_s, i), memory.ld_global_s32_if(memory.gmem_addr(s, i), ok), ok)
    memory.st_global_u32_if(memory.gmem_addr(pred_u, i), memory.ld_global_u32_if(memory.gmem_addr(u, i), ok), ok)
    memory.st_global_f32_if(memory.gmem_addr(pred_f, i), memory.ld_global_f32_if(memory.gmem_addr(x, i), ok), ok)
    pred_zero[i] = memory.ld_global_f32_if(memory.gmem_addr(x, i), False)


def _scalar_inputs(rng, exact):
    x = _convert_inputs(rng, exact)["x"][:64].copy()
    h = rng.standard_normal(64).astype(np.float16)
    h[:3] = [np.inf, -0.0, 6e-8]
    u = (rng.standard_normal(64).astype(np.float32)).view(np.uint32).copy()
    return {"x": x, "h16": h.view(np.uint16), "u": u,
            "s": rng.integers(-2**31, 2**31, 64).astype(np.int32),
            "d": rng.standard_normal(64)}


def _scalar_outputs(inp):
    return {"copies16": np.empty(64, np.uint16), "copies32": np.empty(64, np.uint32),
            "copies_s": np.empty(64, np.int32), "copies_f": np.empty(64, np.float32),
            "copies_d": np.empty(64, np.float64), "halves": np.empty((2, 64), np.uint16),
            "floats": np.empty((2, 64), np.float32), "xbits": np.empty(64, np.uint32),
            "pred16": np.full(64, 0x1234, np.uint16), "pred_s": np.full(64, 77, np.int32),
            "pred_f": np.full(64, 0.5, np.float32), "pred_zero": np.empty(64, np.float32),
            "pred_u": np.full(64, 0xCAFE, np.uint32)}


def _scalar_reference(inp):
    x = inp["x"]
    keep = np.arange(64) % 3 != 0
    with np.errstate(over="ignore"):
        halves = np.stack([x.astype(BF16).view(np.uint16), x.astype(np.float16).view(np.uint16)])
    return {"copies16": inp["h16"][::-1].copy(), "copies32": inp["u"][::-1].copy(),
            "copies_s": inp["s"][::-1].copy(), "copies_f": x[::-1].copy(),
            "copies_d": inp["d"][::-1].copy(), "halves": halves,
            "floats": np.stack([inp["h16"].view(np.float16).astype(np.float32),
                                inp["u"].view(np.float32)]),
            "xbits": x.view(np.uint32).copy(),
            "pred16": np.where(keep, inp["h16"], np.uint16(0x1234)).astype(np.uint16),
            "pred_s": np.where(keep, inp["s"], 77).astype(np.int32),
            "pred_f": np.where(keep, x, np.float32(0.5)).astype(np.float32),
            "pred_zero": np.zeros(64, np.float32),
            "pred_u": np.where(keep, inp["u"], np.uint32(0xCAFE)).astype(np.uint32)}


_register(Probe(
    "scalar_memory_and_conversions",
    tuple(f"{op}_global_{t}" for t in ("u16", "u32", "s32", "f32", "f64") for op in ("ld", "st"))
    + tuple(f"{op}_global_{t}_if" for t in ("u16", "u32", "s32", "f32") for op in ("ld", "st"))
    + ("gmem_addr", "cvt_f32_to_bf16", "cvt_f32_to_f16", "f16_bits_to_f32", "bits_to_f32",
       "f32_to_bits"),
    _scalar_kernel, _scalar_inputs, _scalar_outputs, _scalar_reference, threads=64,
    keep_initial=("pred16", "pred_s", "pred_f", "pred_u"),
))


# ---------------------------------------------------------------------------------------
# ld.shared.f64: doubles written to dynamic shared memory, read back rotated by address
# ---------------------------------------------------------------------------------------
@cuda.jit
def _ld_shared_f64_kernel(x, out):
    i = cuda.threadIdx.x
    sh = cuda.shared.array(0, np.float64)
    sh[i] = x[i]
    cuda.syncthreads()
    out[i] = memory.ld_shared_f64(memory.smem_addr(sh, (i * 5 + 3) % 64))


_register(Probe(
    "ld_shared_f64", ("ld_shared_f64", "smem_addr"), _ld_shared_f64_kernel,
    lambda rng, exact: {"x": rng.standard_normal(64)},
    lambda inp: {"out": np.empty(64)},
    lambda inp: {"out": inp["x"][(np.arange(64) * 5 + 3) % 64]},
    threads=64, shared_bytes=64 * 8,
))


# ---------------------------------------------------------------------------------------
# warp shuffles: each butterfly distance once, then a full butterfly sum
# ---------------------------------------------------------------------------------------
@cuda.jit
def _shfl_kernel(x, u, moved, moved_u, total, via_shared):
    i = cuda.threadIdx.x
    v = x[i]
    sh = cuda.shared.array(32, np.uint32)
    sh[i] = u[i]
    warp.warp_sync()  # the other lanes' shared-memory writes are visible after it
    via_shared[i] = sh[i ^ 9]
    moved[0, i] = warp.shfl_bfly_f32(v, 1)
    moved[1, i] = warp.shfl_bfly_f32(v, 2)
    moved[2, i] = warp.shfl_bfly_f32(v, 4)
    moved[3, i] = warp.shfl_bfly_f32(v, 8)
    moved[4, i] = warp.shfl_bfly_f32(v, 16)
    moved_u[i] = warp.shfl_bfly_u32(u[i], 5)
    s = v + warp.shfl_bfly_f32(v, 16)
    s += warp.shfl_bfly_f32(s, 8)
    s += warp.shfl_bfly_f32(s, 4)
    s += warp.shfl_bfly_f32(s, 2)
    s += warp.shfl_bfly_f32(s, 1)
    total[i] = s


def _shfl_inputs(rng, exact):
    x = (rng.integers(-64, 64, 32) if exact else rng.standard_normal(32)).astype(np.float32)
    return {"x": x, "u": rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)}


def _shfl_reference(inp):
    lanes = np.arange(32)
    x = inp["x"]
    # the butterfly's sums in its own order, in float32 (IEEE adds, as the GPU's): equal bit
    # for bit on random inputs too. (A float64 sum within 1e-6 of the largest total failed
    # when 32 random values nearly cancelled: an absolute error of 2.6e-7 on a total of 0.057.)
    total = x + x[lanes ^ 16]
    for m in (8, 4, 2, 1):
        total = total + total[lanes ^ m]
    return {"moved": np.stack([x[lanes ^ m] for m in (1, 2, 4, 8, 16)]),
            "moved_u": inp["u"][lanes ^ 5], "via_shared": inp["u"][lanes ^ 9],
            "total": total.astype(np.float32)}


_register(Probe(
    "warp_shuffles", ("shfl_bfly_f32", "shfl_bfly_u32", "warp_sync"), _shfl_kernel, _shfl_inputs,
    lambda inp: {"moved": np.empty((5, 32), np.float32), "moved_u": np.empty(32, np.uint32),
                 "total": np.empty(32, np.float32), "via_shared": np.empty(32, np.uint32)},
    _shfl_reference,
))


# ---------------------------------------------------------------------------------------
# warp vote: one lane's predicate, none, every lane's, and a loop that exits on it
# ---------------------------------------------------------------------------------------
@cuda.jit
def _vote_kernel(x, anyx, one, none, spins):
    i = cuda.threadIdx.x
    anyx[i] = warp.vote_any(x[i])
    one[i] = warp.vote_any(np.uint32(i == x[31] % 32))  # exactly one lane: always 1
    none[i] = warp.vote_any(np.uint32(0))
    n = np.uint32(0)  # a uniform loop: it runs until lane x[0] % 32 has counted to 3
    while warp.vote_any(np.uint32(i == x[0] % 32 and n >= 3)) == 0:
        n += 1
    spins[i] = n


def _vote_inputs(rng, exact):
    x = np.zeros(32, np.uint32)  # most lanes 0, so the vote depends on the few that are not
    x[rng.choice(32, size=int(rng.integers(0, 3)), replace=False)] = rng.integers(1, 2**32, 1)[0]
    x[0], x[31] = rng.integers(0, 2**32, 2)
    return {"x": x}


def _vote_reference(inp):
    return {"anyx": np.full(32, int(inp["x"].any()), np.uint32),
            "one": np.ones(32, np.uint32), "none": np.zeros(32, np.uint32),
            "spins": np.full(32, 3, np.uint32)}


_register(Probe(
    "warp_vote", ("vote_any",), _vote_kernel, _vote_inputs,
    lambda inp: {k: np.empty(32, np.uint32) for k in ("anyx", "one", "none", "spins")},
    _vote_reference,
))


# ---------------------------------------------------------------------------------------
# GPU-scope hand-off: warp 0 writes, fences and releases a flag; warp 1 polls it with
# acquire loads, fences and reads what warp 0 wrote (the split tail's pattern)
# ---------------------------------------------------------------------------------------
@cuda.jit
def _handoff_kernel(x, token, flag, data, got, seen):
    i = cuda.threadIdx.x
    lane = i % 32
    f_at = memory.gmem_addr(flag, 0)
    if i < 32:
        data[i] = x[i] * np.uint32(3) + np.uint32(1)
        memory.fence_acq_rel_gpu()
        warp.warp_sync()
        if lane == 0:
            memory.st_release_gpu_s64(f_at, token[0])
    else:
        v = np.int64(0)
        while warp.vote_any(np.uint32(v == token[0])) == 0:
            if lane == 0:
                v = memory.ld_acquire_gpu_s64(f_at)
        warp.warp_sync()
        memory.fence_acq_rel_gpu()
        got[lane] = data[lane]
        seen[lane] = v if lane == 0 else token[0]


def _handoff_inputs(rng, exact):
    return {"x": rng.integers(0, 2**30, 32, dtype=np.uint64).astype(np.uint32),
            "token": rng.integers(1, 2**62, 1, dtype=np.int64),
            "flag": np.zeros(1, np.int64)}


def _handoff_reference(inp):
    d = inp["x"] * np.uint32(3) + np.uint32(1)
    return {"data": d, "got": d, "seen": np.full(32, inp["token"][0], np.int64)}


_register(Probe(
    "gpu_handoff", ("fence_acq_rel_gpu", "ld_acquire_gpu_s64", "st_release_gpu_s64"),
    _handoff_kernel, _handoff_inputs,
    lambda inp: {"data": np.empty(32, np.uint32), "got": np.empty(32, np.uint32),
                 "seen": np.empty(32, np.int64)},
    _handoff_reference, threads=64,
))


# ---------------------------------------------------------------------------------------
# named barriers: two groups of two warps in one block, each meeting on its own barrier a
# different number of rounds (group g: 1 + 2g); each round a thread posts a value to shared
# memory and, after its group's barrier, adds what its group's next thread posted. A barrier
# counting the whole block would hang group 1's extra rounds or let reads pass the writes.
# ---------------------------------------------------------------------------------------
@cuda.jit
def _named_barrier_kernel(x, acc):
    posted = cuda.shared.array(128, np.uint32)
    tb = cuda.threadIdx.x
    g = tb // 64
    mine = x[tb]
    total = np.uint32(0)
    for r in range(1 + 2 * g):
        posted[tb] = mine * np.uint32(r + 1)
        warp.bar_sync(np.uint32(1 + g), np.uint32(64))
        total += posted[g * 64 + (tb + 1) % 64]
        warp.bar_sync(np.uint32(1 + g), np.uint32(64))  # reads done before the next writes
    acc[tb] = total


def _named_barrier_reference(inp):
    x = inp["x"].astype(np.uint64)
    out = np.empty(128, np.uint64)
    for tb in range(128):
        g = tb // 64
        nxt = x[g * 64 + (tb + 1) % 64]
        out[tb] = sum(nxt * (r + 1) for r in range(1 + 2 * g))
    return {"acc": (out & 0xFFFFFFFF).astype(np.uint32)}


_register(Probe(
    "named_barriers", ("bar_sync",), _named_barrier_kernel,
    lambda rng, exact: {"x": rng.integers(0, 2**30, 128, dtype=np.uint64).astype(np.uint32)},
    lambda inp: {"acc": np.empty(128, np.uint32)}, _named_barrier_reference, threads=128,
))


# ---------------------------------------------------------------------------------------
# lane 0's value broadcast: per warp of two, of a per-lane value and of the warp's index
# ---------------------------------------------------------------------------------------
@cuda.jit
def _broadcast_kernel(u, got, warp_of, derived):
    i = cuda.threadIdx.x
    got[i] = warp.broadcast_lane0_u32(u[i])
    w = warp.broadcast_lane0_u32(np.uint32(i // 32))  # a warp index, uniform to ptxas
    warp_of[i] = w
    derived[i] = u[w * 32 + 31 - i % 32]  # used as an index: lane i of warp w reads lane 31 - i


def _broadcast_reference(inp):
    lanes = np.arange(64)
    return {"got": inp["u"][lanes // 32 * 32], "warp_of": (lanes // 32).astype(np.uint32),
            "derived": inp["u"][lanes // 32 * 32 + 31 - lanes % 32]}


_register(Probe(
    "warp_broadcast", ("broadcast_lane0_u32",), _broadcast_kernel,
    lambda rng, exact: {"u": rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)},
    lambda inp: {k: np.empty(64, np.uint32) for k in ("got", "warp_of", "derived")},
    _broadcast_reference, threads=64,
))

# ---------------------------------------------------------------------------------------
# Running and checking
# ---------------------------------------------------------------------------------------
def run(probe: Probe, inputs: dict) -> dict:
    """Launch ``probe`` on its inputs (GPU, or the simulator when it is enabled)."""
    own = getattr(probe, "run", None)
    if own is not None:  # probes that launch themselves (tensor maps, sm_90a): hopper_probes
        return own(inputs)
    outs = probe.outputs(inputs)
    for name, a in outs.items():
        if name not in probe.keep_initial:
            _poison(a)
    d_in = [cuda.to_device(np.ascontiguousarray(v)) for v in inputs.values()]
    d_out = {k: cuda.to_device(v) for k, v in outs.items()}
    probe.kernel[1, probe.threads, 0, probe.shared_bytes](*d_in, *d_out.values())
    cuda.synchronize()
    return {k: v.copy_to_host() for k, v in d_out.items()}


def mismatch(probe: Probe, got: dict, want: dict, exact: bool):
    """None when ``got`` matches ``want``, else a message naming where (index, expected, got)."""
    for key, w in want.items():
        g = got[key]
        if g.shape != w.shape:
            return f"{probe.name}.{key}: shape {g.shape}, expected {w.shape}"
        tol = 0 if exact else (probe.tolerance or {}).get(key, 0)
        if tol == 0 or w.dtype.kind in "ui":
            bad = g.view(np.uint8).reshape(g.shape + (-1,)) != w.view(np.uint8).reshape(w.shape + (-1,))
            bad = bad.any(axis=-1)
        else:
            gf, wf = g.astype(np.float64), w.astype(np.float64)
            scale = max(np.abs(wf).max(), 1e-30)
            bad = ~(np.abs(gf - wf) <= tol * scale) & ~(np.isnan(gf) & np.isnan(wf))
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{probe.name}.{key}: {int(bad.sum())} of {bad.size} elements differ; first at "
                    f"{idx}: expected {w[idx]!r}, got {g[idx]!r}")
    return None


# The Hopper probes (wgmma, TMA, mbarrier, ...) live beside this module and register here.
from . import hopper_probes  # noqa: E402,F401
