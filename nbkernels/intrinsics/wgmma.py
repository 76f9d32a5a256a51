"""``wgmma.mma_async`` (sm_90a): warpgroup-wide D = A @ B + D on the Hopper tensor cores.

One intrinsic per input type and A source covers every N the ISA allows; N is the length
of the accumulator tuple (N/2 registers per thread):

* ``wgmma_{bf16,f16}_f32_{ss,rs}``: m64nNk16, N = 8..256 step 8;
* ``wgmma_tf32_f32_{ss,rs}``: m64nNk8, N = 8..256 step 8;
* ``wgmma_{e4m3,e5m2,e4m3_e5m2,e5m2_e4m3}_f32_{ss,rs}``: m64nNk32, N = 8..256 step 8;
* ``wgmma_{s8,u8,s8_u8,u8_s8}_s32_{ss,rs}``: m64nNk32, N = 8, 16, 24, 32..256 step 16.

``_ss`` reads A and B through shared-memory descriptors (:mod:`.descriptors`), ``_rs``
takes A from registers (4 uint32 per thread, the ``mma.sync`` A fragment of the thread's
warp, rows ``16 * warp`` on). ``scale_d = 0`` computes D = A @ B (the accumulator's input
is ignored). ``trans_a`` / ``trans_b`` (16-bit types only) select MN-major operands.

All 128 threads of a warpgroup (4 consecutive warps) execute each call. The sequence is
the PTX ISA's: ``wgmma_fence()``; the wgmma calls; ``wgmma_commit_group()``;
``wgmma_wait_group(n)`` before reading the accumulators or reusing the shared memory; pass
accumulators through ``wgmma_fence_operand_*`` around that span so that the compiler keeps
its register reads and writes outside it. Shared memory written by threads must be made
visible to the async proxy (``fence_proxy_async``) before a wgmma reads it.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from numba import cuda, types

from ..arch import Arch
from ..errors import SimulatorError
from . import bits, descriptors, sim
from .factory import build
from .spec import Const, InstructionSpec, Operand, ShapeVar

SM90A = Arch(9, 0, "a")
WARPGROUP = 128
N_STEP8 = tuple(range(8, 257, 8))
N_INT8 = (8, 16, 24) + tuple(range(32, 257, 16))

# element kind -> (bytes, K of one wgmma, PTX type)
KINDS = {"bf16": (2, 16), "f16": (2, 16), "tf32": (4, 8), "e4m3": (1, 32), "e5m2": (1, 32),
         "s8": (1, 32), "u8": (1, 32)}
_NP = {"bf16": np.dtype(ml_dtypes.bfloat16), "f16": np.dtype(np.float16),
       "e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "e5m2": np.dtype(ml_dtypes.float8_e5m2),
       "s8": np.dtype(np.int8), "u8": np.dtype(np.uint8)}


# --- register layouts (thread t of the warpgroup, element i) ------------------------------
# Plain arithmetic: kernels compile these as device functions (PTX ISA "Register Fragments
# and Shared Memory Matrix Layouts" of wgmma; CuTe's CLayout_64xN / ALayout_64x{8,16,32}).
def acc_m64nN(t, i):
    """Accumulator element i of thread t: (row, col) of the 64xN tile."""
    w, lane = t // 32, t % 32
    return 16 * w + (lane >> 2) + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane & 3) + (i % 2)


def a_m64k16_16bit(t, i):
    """A element i (two per register) of thread t, 16-bit types: (row, k). Warp w holds rows
    16w..16w+15 in the mma.m16n8k16 A layout."""
    lane = t % 32
    g, q = lane >> 2, lane & 3
    return 16 * (t // 32) + g + 8 * ((i // 2) % 2), 2 * q + (i % 2) + 8 * (i // 4)


def a_m64k8_tf32(t, i):
    """A element i (one per register) of thread t, tf32 (mma.m16n8k8 tf32 A per warp)."""
    lane = t % 32
    g, q = lane >> 2, lane & 3
    return 16 * (t // 32) + g + 8 * (i % 2), q + 4 * (i // 2)


def a_m64k32_8bit(t, i):
    """A element i (four per register) of thread t, 8-bit types (mma.m16n8k32 A per warp)."""
    lane = t % 32
    g, q = lane >> 2, lane & 3
    return 16 * (t // 32) + g + 8 * ((i // 4) % 2), 4 * q + (i % 4) + 16 * (i // 8)


A_LAYOUTS = {2: a_m64k16_16bit, 4: a_m64k8_tf32, 1: a_m64k32_8bit}  # by element size


_ZEROS = {}


def zero_accumulator(nregs: int, dtype=np.float32):
    """A device function returning a ``nregs``-tuple of zeros (an accumulator to start from;
    numba cannot write ``(0.0,) * n``). Cached per (nregs, dtype)."""
    key = (int(nregs), np.dtype(dtype))
    if key not in _ZEROS:
        if not 1 <= key[0] <= 128:
            raise ValueError(f"zero_accumulator: nregs must be in [1, 128], got {nregs!r}")
        name = {np.dtype(np.float32): "float32", np.dtype(np.int32): "int32"}[key[1]]
        src = f"def zeros():\n    return ({', '.join([f'{name}(0)'] * key[0])},)\n"
        ns = {name: getattr(np, name)}
        exec(src, ns)  # noqa: S102 - fixed template, integer count
        _ZEROS[key] = cuda.jit(device=True, inline="always")(ns["zeros"])
    return _ZEROS[key]


# --- simulator ----------------------------------------------------------------------------
def _decode(raw: np.ndarray, kind: str) -> np.ndarray:
    """Raw element bytes (uint8, last axis = element bytes) -> float64 or int64 values."""
    if kind == "tf32":  # the tensor core reads the top 19 bits of the f32 pattern
        b = raw.copy().view(np.uint32)[..., 0] & np.uint32(0xFFFFE000)
        return b.view(np.float32).astype(np.float64)
    vals = raw.copy().view(_NP[kind])[..., 0]
    return vals.astype(np.int64 if kind in ("s8", "u8") else np.float64)


def _smem_operand(desc, kind, mn, k, mn_major, what):
    f = descriptors.decode_desc(desc)
    span = descriptors.SWIZZLE_BYTES[f.swizzle]
    if f.base_offset != 0:
        raise SimulatorError(f"{what}: descriptor base_offset {f.base_offset} is not simulated "
                             "(start swizzled operands on their swizzle atom instead)")
    if span and (f.start >> 7) & (span // 16 - 1):
        raise SimulatorError(f"{what}: swizzled operand start {f.start:#x} is not on a "
                             f"{8 * span}-byte swizzle atom row 0 (needs base_offset)")
    esize = KINDS[kind][0]
    addrs = descriptors.element_offsets(desc, esize, mn, k, mn_major)
    lo, hi = int(addrs.min()), int(addrs.max()) + esize
    window = sim.launch_state().shared.bytes_at(lo, hi - lo, what)
    idx = (addrs - lo)[..., None] + np.arange(esize)
    return _decode(window[idx], kind)


def _reg_operand(regs_per_thread, kind, k):
    """A (64 x k) from each thread's 4 A registers."""
    esize = KINDS[kind][0]
    A = np.zeros((64, k), np.int64 if kind in ("s8", "u8") else np.float64)
    layout = A_LAYOUTS[esize]
    for t, regs in enumerate(regs_per_thread):
        raw = np.array([bits.u32(r) for r in regs], np.uint32).view(np.uint8)
        vals = _decode(raw.reshape(-1, esize), kind)
        for i, v in enumerate(vals):
            A[layout(t, i)] = v
    return A


def _make_sim(name, a_kind, b_kind, acc, a_from_regs, has_trans):
    k = KINDS[a_kind][1]
    integer = acc == "s32"

    def simulate(threads):
        first = threads[0]
        nregs = len(first[0])
        n = 2 * nregs
        for t, args in enumerate(threads):
            shared = 2 if a_from_regs else 1  # what every thread must pass alike
            if tuple(args[shared:]) != tuple(first[shared:]):
                mine, theirs = ([hex(int(v)) for v in a[shared:]] for a in (args, first))
                raise SimulatorError(f"thread {t} of the warpgroup passed other descriptors, "
                                     f"scale_d or transposes than thread 0: {mine} vs {theirs}")
        trans_a = bool(first[4]) if has_trans and not a_from_regs else False
        trans_b = bool(first[-1]) if has_trans else False
        if a_from_regs:
            A = _reg_operand([args[1] for args in threads], a_kind, k)
        else:
            A = _smem_operand(int(first[1]), a_kind, 64, k, trans_a, f"{name} (A)")
        B = _smem_operand(int(first[2]), b_kind, n, k, trans_b, f"{name} (B)").T  # (k, n)
        if integer:
            D = A.astype(object).dot(B.astype(object))
        else:
            D = A @ B
        scale_d = int(first[3]) != 0
        out = []
        for t, args in enumerate(threads):
            regs = []
            for i in range(nregs):
                v = D[acc_m64nN(t, i)]
                if scale_d:
                    v = v + (int(args[0][i]) if integer else float(args[0][i]))
                regs.append(np.int32(bits.wrap_s32(v)) if integer else np.float32(v))
            out.append(tuple(regs))
        return out

    return simulate


def _group_sim(threads):
    return [None] * len(threads)


# --- specs ----------------------------------------------------------------------------------
def _wgmma(a_kind, b_kind, acc, a_source):
    esize, k = KINDS[a_kind]
    sixteen = esize == 2
    values = N_INT8 if acc == "s32" else N_STEP8
    reg_t = types.int32 if acc == "s32" else types.float32
    types_ptx = f"{acc}.{a_kind}.{b_kind}"
    tag = a_kind if a_kind == b_kind else f"{a_kind}_{b_kind}"
    name = f"wgmma_{tag}_{acc}_{a_source}"
    regs_a = a_source == "rs"
    a_operand = "$a" if regs_a else "$a_desc"
    scales = "" if acc == "s32" else ", 1, 1"
    trans = ("" if not sixteen else (", $trans_b" if regs_a else ", $trans_a, $trans_b"))
    ptx = ("{ .reg .pred %nbk_p; setp.ne.b32 %nbk_p, $scale_d, 0; "
           f"wgmma.mma_async.sync.aligned.m64n${{N}}k{k}.{types_ptx} "
           f"$d, {a_operand}, $b_desc, %nbk_p{scales}{trans}; }}")
    inputs = [Operand("acc", reg_t, "N", f"accumulator, N/2 x {acc} per thread", tied_to="d")]
    if regs_a:
        inputs.append(Operand("a", types.uint32, 4, f"A fragment ({a_kind}) of this thread",
                              braced=True))
    else:
        inputs.append(Operand("a_desc", types.uint64, doc="shared-memory descriptor of A (64xK)"))
    inputs += [Operand("b_desc", types.uint64, doc="shared-memory descriptor of B (KxN)"),
               Operand("scale_d", types.uint32, doc="0: D = A@B, else D = A@B + D")]
    if sixteen:
        if not regs_a:
            inputs.append(Const("trans_a", allowed=(0, 1), doc="1: A is M-major"))
        inputs.append(Const("trans_b", allowed=(0, 1), doc="1: B is N-major"))
    sass = {1: ("QGMMA",) if a_kind.startswith("e") else ("IGMMA",), 2: ("HGMMA",),
            4: ("HGMMA",)}[esize]
    return build(InstructionSpec(
        name=name,
        family="wgmma",
        ptx=ptx,
        mnemonic=f"wgmma.mma_async.sync.aligned.m64nNk{k}.{types_ptx}",
        outputs=(Operand("d", reg_t, "N", braced=True),),
        inputs=tuple(inputs),
        shape_var=ShapeVar("N", values, 2, "N of m64nNk; the accumulator holds N/2 registers"),
        min_arch=SM90A,
        min_ptx=(8, 0),
        memory=True,  # reads shared memory (B, and A for _ss)
        convergent=True,
        sass=sass,
        simulate=_make_sim(name, a_kind, b_kind, acc, regs_a, sixteen),
        warp_collective_sim=True,
        sim_group=WARPGROUP,
        doc=(f"D = A @ B (+ D) on a 64xNx{k} tile, {a_kind} x {b_kind} -> {acc}, A from "
             f"{'registers' if regs_a else 'shared memory'}, B from shared memory; "
             "warpgroup-collective, asynchronous (see wgmma_commit_group / wgmma_wait_group)."),
        extra={"a_kind": a_kind, "b_kind": b_kind, "acc": acc, "k": k, "source": a_source},
    ))


_VARIANTS = [("bf16", "bf16", "f32"), ("f16", "f16", "f32"), ("tf32", "tf32", "f32")]
_VARIANTS += [(a, b, "f32") for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")]
_VARIANTS += [(a, b, "s32") for a in ("s8", "u8") for b in ("s8", "u8")]
WGMMA = {(a, b, acc, src): _wgmma(a, b, acc, src) for a, b, acc in _VARIANTS
         for src in ("ss", "rs")}
for _intr in WGMMA.values():
    globals()[_intr.spec.name] = _intr


def _group_op(name, ptx, doc, inputs=(), sass=()):
    return build(InstructionSpec(
        name=name, family="wgmma", ptx=ptx, inputs=inputs, min_arch=SM90A, min_ptx=(8, 0),
        memory=True, convergent=True, sass=sass, simulate=_group_sim, warp_collective_sim=True,
        sim_group=WARPGROUP, doc=doc))


wgmma_fence = _group_op(
    "wgmma_fence", "wgmma.fence.sync.aligned;",
    "Order this warpgroup's earlier register and shared-memory accesses before the wgmma "
    "calls that follow (needed before the first wgmma and after touching its registers).",
    sass=("WARPGROUP.ARRIVE",))
wgmma_commit_group = _group_op(
    "wgmma_commit_group", "wgmma.commit_group.sync.aligned;",
    "Close the warpgroup's pending wgmma calls into one group.")
wgmma_wait_group = _group_op(
    "wgmma_wait_group", "wgmma.wait_group.sync.aligned $n;",
    "Wait until at most n of the warpgroup's committed wgmma groups are pending; their "
    "accumulators may be read and their shared memory reused after it.",
    inputs=(Const("n", lo=0, hi=7, doc="groups that may stay pending"),),
    sass=("WARPGROUP.DEPBAR",))


def _fence_operand(suffix, ty):
    return build(InstructionSpec(
        name=f"wgmma_fence_operand_{suffix}",
        family="wgmma",
        # No instruction: the asm ties the registers in and out, so the compiler cannot move
        # their reads or writes across it (CUTLASS's warpgroup_fence_operand).
        ptx="// wgmma_fence_operand",
        mnemonic="// wgmma_fence_operand",
        outputs=(Operand("d", ty, "R", braced=True),),
        inputs=(Operand("acc", ty, "R", tied_to="d"),),
        shape_var=ShapeVar("R", tuple(range(1, 129)), 1, "registers in the tuple"),
        min_arch=Arch(7, 5),
        side_effect=True,
        simulate=lambda acc: tuple(acc),
        doc=("Return the accumulator tuple unchanged, as a point the compiler keeps its "
             "register accesses on their side of (bracket wgmma fence/commit/wait with it)."),
    ))


wgmma_fence_operand_f32 = _fence_operand("f32", types.float32)
wgmma_fence_operand_s32 = _fence_operand("s32", types.int32)

__all__ = sorted([i.spec.name for i in WGMMA.values()] + [
    "wgmma_fence", "wgmma_commit_group", "wgmma_wait_group", "wgmma_fence_operand_f32",
    "wgmma_fence_operand_s32"])
