"""The float64 tensor-core GEMM (sm_80+): ``D = alpha * A @ B + beta * C`` on DMMA.

Design (per block of ``threads`` threads computing a ``bm x bn`` tile of D):

* operands are staged as in the 16-bit kernel, by its loaders (mma_kernel.stage_loader): a
  ``stages``-deep ring of 16-byte ``cp.async`` copies, zero-filled past the edges and free of
  predicates in interior blocks; predicated 8-byte loads where an operand is 8- but not 16-byte
  aligned (any float64 array a framework allocates is 8-byte aligned). A stage
  holds 16 doubles of K (``bk_bytes`` 128): rows of 16 doubles (K-major operand) or of
  ``bm``/``bn`` doubles, one per k (M/N-major operand), so row- and column-major inputs and
  transposed views run without a copy;
* ``ldmatrix`` moves 16-bit elements, so fragments are read with plain 8-byte shared loads.
  Lane (g, t) of ``mma.m8n8k4.f64`` holds A[g][t] and B[t][g] (the m16n8k8 fragments are
  those of two 8-row fragments and two k-quarters stacked): a half-warp reads four rows
  (K-major) or four k (M/N-major) at once. The 16-byte chunk index is XORed with
  ``2 * (row & 3)``, which puts those four rows in four different chunk pairs of the 128-byte
  bank window (two wavefronts per warp, the minimum for 256 bytes);
* K advances a whole stage (16 doubles) at a time, one k-group (``mma.m16n8k16.f64``,
  DMMA.16x8x16 on sm_90+; eight m8n8k4 below): a warp reads the B fragments of its 8-column
  fragments for the four k-quarters, then per 16-row piece of its ``wm x wn`` sub-tile that
  piece's A fragments and its MMAs (0.88-0.92x cuBLAS against 0.81-0.85x for k-groups of 8
  with a K-major ``a``, H200, session 9 run 3, perf-notes d4; with an M-major ``a`` 0.91-0.99x
  against 0.85-0.94x, H100, session 27 run A, perf-notes d7). ``TileConfig.mma_k`` 8 forces
  groups of 8 instead: the m8n8k4 fragments of each 8-row and 8-column fragment for the
  group's two k-quarters, then the MMAs of each 16x8 piece. Every fragment read is one LDS.64
  from a per-thread base register plus a constant (``frag_bases``). The instruction is chosen when the kernel is compiled, by the
  target (CUDA C++'s ``#if __CUDA_ARCH__ >= 900``, here at lowering: ``_group_by_target``):
  sm_90 and newer issue one ``mma.m16n8k8.f64`` (SASS DMMA.16x8x8), what cuBLAS's Hopper DGEMM
  issues too (ncu, session 9: ``sm90_xmma_gemm_f64f64_..._tilesize128x64x16_stage3_warpsize
  2x2x1_tensor16x8x8``, the same tile as the default here); sm_80 to sm_89 issue four
  ``mma.m8n8k4.f64`` (DMMA.884) on the same registers, k-quarter 0 before 1 for each
  accumulator as the m8n8k4 kernel before did, so their results are unchanged. A k-group of
  8 of the 64x32 warp tile is 16 DMMA.16x8x8 (1024 FMA each) or 64 DMMA.884 (256 each);
* a k-tile (cp.async, whole-stage k-groups): wait for its stage and a barrier, B's fragments and
  the first 16-row piece's A fragments and MMAs, then the copies that refill the slot every
  warp finished reading before the barrier, then the other pieces (perf-notes d6: with the
  refill first, its ~70 instructions delayed every k-tile's first DMMA);
* ``frag_db=1`` loads k-group kg+1's fragments before group kg's MMAs, across the stage
  boundary too (the wait and barrier move before a stage's last group), in k-groups of 4
  (``mma.m16n8k4.f64`` on sm_90+, two m8n8k4 below): doubled groups of 8 spill 72 / 124 B on
  sm_80 / sm_90a (ptxas 13.4). An option to measure, not the default (with m8n8k4 it ran
  0.38-0.40x cuBLAS against 0.42-0.49x without);
* the epilogue is the 16-bit kernel's (the accumulators are held in its m16n8 layout: rows g
  and g + 8 of 16-row blocks), with predicated 8-byte loads of C and stores of D.

Same arguments as the 16-bit kernel (run._mma_sig with float64 alpha and beta); every size,
stride and the batch are run-time arguments.
"""
from __future__ import annotations

from functools import lru_cache

from numba import config, cuda, float64, int64, types, uint32

from .. import intrinsics as I
from ..arch import Arch, target_satisfies
from .config import TileConfig, misfit
from .mma_kernel import (_OUT_BYTES, _dev, _unrolled_epilogue, _wait_group, block_raster,
                         stage_loader, stage_refill)

ESZ = 8
KSTEP = 4  # K of one mma.m8n8k4.f64: the unit of the fragment loads
SWZ_PERIOD = 4  # rows after which the swizzle repeats
SM90 = Arch(9, 0)


# --- one k-group of one 16x8 accumulator piece: D = A (16 x k) @ B (k x 8) + C, f64 ----------
# k = 16: a is the m16n8k16 A fragment (rows g / g + 8 of k-quarters 0, 1, 2, 3), b the B
# fragment of the four k-quarters; k = 8: a is the m16n8k8 A fragment (rows g / g + 8 of
# k-quarter 0, then of k-quarter 1), b the B fragment of k-quarters 0 and 1; k = 4: a holds
# rows g / g + 8, b one double. c: the m16n8 accumulators (row g: c0 c1, row g + 8: c2 c3).
def _k16_sm90(a, b, c):
    return I.mma_m16n8k16_f64(a, b, c)


def _k16_m8n8k4(a, b, c):  # k-quarters 0..3 in order: the same sums as two groups of 8
    lo = I.mma_m8n8k4_f64(a[0], b[0], (c[0], c[1]))
    hi = I.mma_m8n8k4_f64(a[1], b[0], (c[2], c[3]))
    lo = I.mma_m8n8k4_f64(a[2], b[1], lo)
    hi = I.mma_m8n8k4_f64(a[3], b[1], hi)
    lo = I.mma_m8n8k4_f64(a[4], b[2], lo)
    hi = I.mma_m8n8k4_f64(a[5], b[2], hi)
    lo = I.mma_m8n8k4_f64(a[6], b[3], lo)
    hi = I.mma_m8n8k4_f64(a[7], b[3], hi)
    return (lo[0], lo[1], hi[0], hi[1])


def _k8_sm90(a, b, c):
    return I.mma_m16n8k8_f64(a, b, c)


def _k8_m8n8k4(a, b, c):
    lo = I.mma_m8n8k4_f64(a[0], b[0], (c[0], c[1]))
    hi = I.mma_m8n8k4_f64(a[1], b[0], (c[2], c[3]))
    lo = I.mma_m8n8k4_f64(a[2], b[1], lo)
    hi = I.mma_m8n8k4_f64(a[3], b[1], hi)
    return (lo[0], lo[1], hi[0], hi[1])


def _k4_sm90(a, b, c):
    return I.mma_m16n8k4_f64(a, b, c)


def _k4_m8n8k4(a, b, c):
    lo = I.mma_m8n8k4_f64(a[0], b, (c[0], c[1]))
    hi = I.mma_m8n8k4_f64(a[1], b, (c[2], c[3]))
    return (lo[0], lo[1], hi[0], hi[1])


#: (group K, instructions) -> the k-group MMA; "sm90" (m16n8kK) needs sm_90, "m8n8k4" sm_80
GROUP_MMA = {(16, "sm90"): _k16_sm90, (16, "m8n8k4"): _k16_m8n8k4,
             (8, "sm90"): _k8_sm90, (8, "m8n8k4"): _k8_m8n8k4,
             (4, "sm90"): _k4_sm90, (4, "m8n8k4"): _k4_m8n8k4}
MMA_CHOICES = ("target", "sm90", "m8n8k4")


@lru_cache(maxsize=None)
def _group_by_target(k):
    """The k-group MMA as a numba intrinsic that compiles the sm_90 shape for sm_90+ targets and
    m8n8k4 below: one kernel source, the instruction picked per compile, as ``#if
    __CUDA_ARCH__ >= 900`` does in CUDA C++ (the target is known only when lowering, see
    nbkernels.arch; numba-cuda compiles the chosen function inline with the kernel's flags)."""
    from numba.cuda.extending import intrinsic

    sm90, older = GROUP_MMA[k, "sm90"], GROUP_MMA[k, "m8n8k4"]
    f4 = types.UniTuple(float64, 4)
    want = (types.UniTuple(float64, k // 2), types.UniTuple(float64, k // 4) if k > 4 else
            float64, f4)

    @intrinsic
    def mma_f64_group(typingctx, a, b, c):
        if (a, b, c) != want:
            raise TypeError(f"mma_f64_group (k={k}) takes {want}, got ({a}, {b}, {c})")

        def codegen(context, builder, sig, args):
            impl = sm90 if target_satisfies(SM90) else older
            return context.compile_internal(builder, impl, sig, args)

        return f4(*want), codegen

    return mma_f64_group


def group_mma(k, mma):
    """The MMA of a k-group of ``k`` (16, 8 or 4): ``mma`` "target" picks m16n8k{k} when compiling
    for sm_90+ and m8n8k4 below; "sm90" (m16n8k{k}) or "m8n8k4" force one. numba's simulator
    compiles nothing, and runs m8n8k4 for "target"."""
    if mma not in MMA_CHOICES:
        raise ValueError(f"dmma: mma must be one of {MMA_CHOICES}, got {mma!r}")
    if config.ENABLE_CUDASIM:
        return GROUP_MMA[k, "m8n8k4" if mma == "target" else mma]
    if mma == "target":
        return _group_by_target(k)
    return _dev(GROUP_MMA[k, mma])


def mma_description(k, mma="target"):
    """Which instructions a k-group issues, for the kernel's ``nbk_mma`` (explain, reports)."""
    sm90, older = f"mma.m16n8k{k}.f64", f"{k // 2} x mma.m8n8k4.f64"
    if mma != "target":
        return (sm90 if mma == "sm90" else older) + " (forced)"
    return f"{sm90} on sm_90+, {older} on sm_80-sm_89"


@_dev
def swizzle(row, ch):
    """16-byte chunk ``ch`` of tile row ``row`` sits at chunk ``ch ^ 2 * (row & 3)``."""
    return ch ^ ((row & 3) << 1)


# --- shared -> registers: where lane (g, t)'s element of fragment f at k-quarter kk sits, in
# doubles from the operand's tile start, from three per-thread values (base, x0, x1). In
# doubles, not bytes: a byte offset shifted right by 3 hid the constant parts from ptxas, which
# then kept one index register per load. R is the warp's first row (K-major) or element
# (M/N-major) in the tile, a multiple of 16; ROWD the doubles per tile row. frag_index is the
# formula; the kernel reads through frag_bases and frag_offset below, which the tests check
# against it lane by lane.
@_dev
def operand_terms(kmajor, ROWD, R, g, t):
    if kmajor:
        # row R + 8f + g, k = 4kk + t: chunk 2kk + t/2 sits at chunk 2(kk ^ (g & 3)) + t/2
        return (R + g) * ROWD + t, (g & 3) << 2, 0
    # row k = 4kk + t, element R + 8f + g: chunk R/2 + 8(f >> 1) + [4(f & 1) + g/2], the
    # bracket XORed with 2t
    return t * ROWD + R + (g & 1), ((g >> 1) ^ (2 * t)) << 1, ((4 + (g >> 1)) ^ (2 * t)) << 1


@_dev
def frag_index(kmajor, ROWD, terms, f, kk):
    base, x0, x1 = terms
    if kmajor:
        return base + ((kk << 2) ^ x0) + f * 8 * ROWD
    return base + (x1 if f & 1 else x0) + kk * 4 * ROWD + (f >> 1) * 16


# The same places as byte addresses for the loads: per thread, four 32-bit shared addresses
# (frag_bases) from which every fragment read of an operand is a constant (frag_offset, once
# the loops unroll) plus the stage's offset, so that each read is one LDS.64 [R+imm]. K-major:
# a base per k-quarter (the swizzle XORs the quarter with the row); M/N-major: one per parity
# of the 8-row fragment. Indexing a float64 shared array instead rebuilt a 64-bit index for each
# of a stage's 48 loads: ~25 integer instructions per DMMA (ncu, session 9 run 2).
@_dev
def frag_seeds(kmajor, terms, byte0):
    """K-major: the row's base address and the per-thread XOR, in bytes; M/N-major: the bases
    of even and odd fragments."""
    base, x0, x1 = terms
    if kmajor:
        return uint32(byte0 + base * ESZ), uint32(x0 * ESZ)
    return uint32(byte0 + (base + x0) * ESZ), uint32(byte0 + (base + x1) * ESZ)


@_dev
def frag_bases(kmajor, seeds):
    """The four bases (K-major: one per k-quarter, the quarter's 32 bytes XORed with the row's
    swizzle; M/N-major: even, odd, even, odd)."""
    s0, s1 = seeds
    if kmajor:
        return (uint32(s0 + s1), uint32(s0 + (s1 ^ 32)), uint32(s0 + (s1 ^ 64)),
                uint32(s0 + (s1 ^ 96)))
    return (s0, s1, s0, s1)


@_dev
def frag_slot(kmajor, f, kk):
    return kk if kmajor else f & 1


@_dev
def frag_offset(kmajor, ROWD, f, kk):
    if kmajor:
        return f * 8 * ROWD * ESZ
    return (kk * 4 * ROWD + (f >> 1) * 16) * ESZ


@_dev
def frag_load(kmajor, ROWD, bases, s_dbl, f, kk):
    """Fragment ``f`` at k-quarter ``kk`` of the stage ``s_dbl`` doubles into shared memory."""
    return I.ld_shared_f64(uint32(bases[frag_slot(kmajor, f, kk)]
                                  + uint32(s_dbl * ESZ + frag_offset(kmajor, ROWD, f, kk))))


def build_kernel(cfg: TileConfig, a_kmajor: bool, b_kmajor: bool, async_copy: bool,
                 epilogue=None, n_extra: int = 0, partial: bool = False, mma: str = "target"):
    """The kernel for one (config, layouts, loader, epilogue); see the module docstring.
    ``mma``: "target" (the instruction by compile target), or forced: "sm90" (m16n8k16 or
    m16n8k8 by the k-group, m16n8k4 with frag_db) or "m8n8k4"."""
    if partial:
        raise ValueError("the f64 kernel has no split-K partials")
    why = misfit(cfg, "f64")
    if why:
        raise ValueError(f"{cfg}: {why}")
    FRAG_DB = bool(cfg.frag_db)
    # K of a k-group (cfg.mma_k, else the whole stage: 16, for either major of a; an M-major a
    # spilled inside the k loop with 16 until its loader took two column groups a thread,
    # perf-notes d7); 4 with frag_db (doubled groups of 8 spill: module docstring)
    MMA_K = 4 if FRAG_DB else (cfg.mma_k or 16)
    group = group_mma(MMA_K, mma)
    BM, BN, STAGES = cfg.bm, cfg.bn, cfg.stages
    BK = cfg.bk_bytes // ESZ
    KSTEPS = BK // MMA_K  # k-groups per stage: 1, 2 (mma_k 8) or 4 (frag_db), unrolled below
    Q = MMA_K // KSTEP  # k-quarters per group
    WARPS_N = cfg.warps_n
    WM, WN = BM // cfg.warps_m, BN // cfg.warps_n
    MF, NF = WM // 8, WN // 8  # 8-row / 8-column fragments of a warp tile
    MP = MF // 2  # 16-row pieces: pairs of 8-row fragments (the m16n8 layout, epilogue too)
    NT = cfg.threads
    # Shared-memory tile geometry: rows x 16-byte chunks per row.
    A_ROWS, A_CPR = (BM, BK // 2) if a_kmajor else (BK, BM // 2)
    B_ROWS, B_CPR = (BN, BK // 2) if b_kmajor else (BK, BN // 2)
    A_ROWB, B_ROWB = A_CPR * 16, B_CPR * 16
    A_BYTES, B_BYTES = A_ROWS * A_ROWB, B_ROWS * B_ROWB
    STAGE_BYTES = A_BYTES + B_BYTES
    setup_a, setup_b, load_stage = stage_loader(
        (A_ROWS, A_CPR, swizzle, SWZ_PERIOD, a_kmajor), (B_ROWS, B_CPR, swizzle, SWZ_PERIOD,
                                                         b_kmajor),
        NT, ESZ, BK, A_BYTES, async_copy, str(cfg))
    wait_stages = _wait_group(STAGES - 2)
    raster = block_raster(cfg.group_m)
    store_all = _unrolled_epilogue(MP, NF, "f64", epilogue, n_extra)
    OSZ = _OUT_BYTES["f64"]

    A_ROWD, B_ROWD = A_ROWB // ESZ, B_ROWB // ESZ  # doubles per tile row
    NBUF = 2 if FRAG_DB else 1
    STAGE_DBL = STAGE_BYTES // ESZ

    @_dev
    def load_frags(s_dbl, kk, buf, a_bases, b_bases, afrag, bfrag):
        """The fragments of k-group kk: k-quarters Q*kk .. Q*kk + Q-1."""
        for q in range(Q):
            for f in range(MF):
                afrag[buf, f, q] = frag_load(a_kmajor, A_ROWD, a_bases, s_dbl, f, Q * kk + q)
            for n in range(NF):
                bfrag[buf, n, q] = frag_load(b_kmajor, B_ROWD, b_bases, s_dbl, n, Q * kk + q)

    if Q == 4:
        @_dev
        def group_operands(afrag, bfrag, buf, p, n):
            return ((afrag[buf, 2 * p, 0], afrag[buf, 2 * p + 1, 0], afrag[buf, 2 * p, 1],
                     afrag[buf, 2 * p + 1, 1], afrag[buf, 2 * p, 2], afrag[buf, 2 * p + 1, 2],
                     afrag[buf, 2 * p, 3], afrag[buf, 2 * p + 1, 3]),
                    (bfrag[buf, n, 0], bfrag[buf, n, 1], bfrag[buf, n, 2], bfrag[buf, n, 3]))
    elif Q == 2:
        @_dev
        def group_operands(afrag, bfrag, buf, p, n):
            return ((afrag[buf, 2 * p, 0], afrag[buf, 2 * p + 1, 0], afrag[buf, 2 * p, 1],
                     afrag[buf, 2 * p + 1, 1]), (bfrag[buf, n, 0], bfrag[buf, n, 1]))
    else:
        @_dev
        def group_operands(afrag, bfrag, buf, p, n):
            return (afrag[buf, 2 * p, 0], afrag[buf, 2 * p + 1, 0]), bfrag[buf, n, 0]

    @_dev
    def piecewise(s_dbl, a_bases, b_bases, afrag, bfrag, acc, p0, p1):
        """Pieces ``p0`` to ``p1 - 1`` (literals) of a whole-stage k-group (k = 16): B's
        fragments of the four k-quarters first (with piece 0), then per 16-row piece its two A
        fragments and its MMAs. A is read piece by piece: all of the warp tile's A fragments of
        four quarters at once would be 32 doubles more live (64 registers on 64-row warp
        tiles, past the 255 cap beside 128 of accumulators)."""
        if p0 == 0:
            for q in range(Q):
                for n in range(NF):
                    bfrag[0, n, q] = frag_load(b_kmajor, B_ROWD, b_bases, s_dbl, n, q)
        for p in range(p0, p1):
            for q in range(Q):
                for f in range(2 * p, 2 * p + 2):
                    afrag[0, f, q] = frag_load(a_kmajor, A_ROWD, a_bases, s_dbl, f, q)
            for n in range(NF):
                a, b = group_operands(afrag, bfrag, 0, p, n)
                d = group(a, b, (acc[p, n, 0], acc[p, n, 1], acc[p, n, 2], acc[p, n, 3]))
                for i in range(4):
                    acc[p, n, i] = d[i]

    @_dev
    def mmas(buf, afrag, bfrag, acc):
        for p in range(MP):
            for n in range(NF):
                a, b = group_operands(afrag, bfrag, buf, p, n)
                d = group(a, b, (acc[p, n, 0], acc[p, n, 1], acc[p, n, 2], acc[p, n, 3]))
                for i in range(4):
                    acc[p, n, i] = d[i]

    next_stage = stage_refill(load_stage, STAGES, STAGE_BYTES, async_copy)

    @_dev
    def kstep(kk, smem, s_dbl, nx_dbl, kt, ktiles, kfull, interior, a_base, b_base, sta,
              stb, m0, n0, M, N, K, lda, ldb, tid, offs, afrag, bfrag, acc):
        """k-group kk (a literal) of k-tile kt."""
        a_bases, b_bases = offs
        if not FRAG_DB:  # wait and barrier, refill a slot, then load and multiply each k-group
            # A whole-stage k-group with cp.async refills the slot after the first piece's MMAs,
            # not before the fragment loads, where its ~70 instructions sat between the barrier
            # and the first DMMA (H100 / H200, 2048^3 and 4096^3: 0.87 / 0.90x cuBLAS -> 0.90
            # / 0.95x; perf-notes d6). Ordinary loads stay first (their values would be live
            # beside the first piece's fragments: sm_86 spilled 100 B), and so do forced k-groups
            # of 8, where the move measured within the spread.
            late = KSTEPS == 1 and async_copy
            if kk == 0:
                if async_copy:
                    wait_stages()
                cuda.syncthreads()
                if not late:
                    next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0,
                               n0, M, N, K, lda, ldb, tid)
            if KSTEPS == 1:
                piecewise(s_dbl, a_bases, b_bases, afrag, bfrag, acc, 0, 1)
                if late:
                    next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0,
                               n0, M, N, K, lda, ldb, tid)
                piecewise(s_dbl, a_bases, b_bases, afrag, bfrag, acc, 1, MP)
            else:
                load_frags(s_dbl, kk, 0, a_bases, b_bases, afrag, bfrag)
                mmas(0, afrag, bfrag, acc)
            return
        # double-buffered: the next k-group's fragments first (at the last k-group the next
        # stage's, after the barrier of k-group KSTEPS-2), then this k-group's MMAs
        if kk + 1 < KSTEPS:
            load_frags(s_dbl, kk + 1, (kk + 1) % 2, a_bases, b_bases, afrag, bfrag)
        else:
            load_frags(nx_dbl, 0, (kk + 1) % 2, a_bases, b_bases, afrag, bfrag)
        if kk == 0:
            next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N,
                       K, lda, ldb, tid)
        mmas(kk % 2, afrag, bfrag, acc)
        if kk == KSTEPS - 2:
            # k-tile kt + 1 has landed (the next k-group reads it) and kt's slot can be refilled
            if async_copy:
                wait_stages()
            cuda.syncthreads()

    @cuda.jit
    def kernel(A, B, C, D, M, N, K, lda, ldb, ldc_r, ldc_c, ldd_r, ldd_c,
               sa, sb, sc, sd, alpha, beta, grid_m, grid_n, splits, kchunk, extra):
        a_ptr = int64(I.gmem_addr(A, 0))
        b_ptr = int64(I.gmem_addr(B, 0))
        c_ptr = int64(I.gmem_addr(C, 0))
        d_ptr = int64(I.gmem_addr(D, 0))
        sm = cuda.shared.array(0, uint32)
        smem = I.smem_addr(sm, 0)
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        wm = warp // WARPS_N
        wn = warp % WARPS_N
        g = lane >> 2
        t = lane & 3
        bm_idx, bn_idx = raster(cuda.blockIdx.x, grid_m, grid_n)
        m0 = bm_idx * BM
        n0 = bn_idx * BN
        z = cuda.blockIdx.y
        batch = z // splits
        k_begin = (z % splits) * kchunk
        if splits > 1:
            K = max(min(K - k_begin, kchunk), 0)
        a_base = a_ptr + (batch * sa + k_begin * (1 if a_kmajor else lda)) * ESZ
        b_base = b_ptr + (batch * sb + k_begin * (1 if b_kmajor else ldb)) * ESZ

        acc = cuda.local.array((MP, NF, 4), float64)
        for p in range(MP):
            for n in range(NF):
                for i in range(4):
                    acc[p, n, i] = 0
        afrag = cuda.local.array((NBUF, MF, Q), float64)
        bfrag = cuda.local.array((NBUF, NF, Q), float64)
        a_terms = operand_terms(a_kmajor, A_ROWD, wm * WM, g, t)
        b_terms = operand_terms(b_kmajor, B_ROWD, wn * WN, g, t)
        offs = (frag_bases(a_kmajor, frag_seeds(a_kmajor, a_terms, smem)),
                frag_bases(b_kmajor, frag_seeds(b_kmajor, b_terms, smem + A_BYTES)))

        ktiles = (K + BK - 1) // BK
        kfull = K // BK
        interior = (m0 + BM <= M) and (n0 + BN <= N)
        sta = setup_a(a_base, m0, M, lda, tid)
        stb = setup_b(b_base, n0, N, ldb, tid)
        for s in range(STAGES - 1):
            if s < ktiles:
                load_stage(smem + s * STAGE_BYTES, s, kfull, interior, a_base, b_base, sta, stb,
                           m0, n0, M, N, K, lda, ldb, tid)
            if async_copy:
                I.cp_async_commit_group()
        if FRAG_DB:
            if async_copy:
                wait_stages()
            cuda.syncthreads()
            load_frags(0, 0, 0, offs[0], offs[1], afrag, bfrag)
        for kt in range(ktiles):
            s_dbl = (kt % STAGES) * STAGE_DBL
            nx_dbl = ((kt + 1) % STAGES) * STAGE_DBL
            # the k-groups, unrolled by hand (numba leaves a loop, which keeps ptxas from
            # overlapping one group's loads with the previous one's MMAs)
            kstep(0, smem, s_dbl, nx_dbl, kt, ktiles, kfull, interior, a_base, b_base,
                  sta, stb, m0, n0, M, N, K, lda, ldb, tid, offs, afrag, bfrag, acc)
            if KSTEPS >= 2:
                kstep(1, smem, s_dbl, nx_dbl, kt, ktiles, kfull, interior, a_base,
                      b_base, sta, stb, m0, n0, M, N, K, lda, ldb, tid, offs, afrag, bfrag, acc)
            if KSTEPS == 4:
                kstep(2, smem, s_dbl, nx_dbl, kt, ktiles, kfull, interior, a_base,
                      b_base, sta, stb, m0, n0, M, N, K, lda, ldb, tid, offs, afrag, bfrag, acc)
                kstep(3, smem, s_dbl, nx_dbl, kt, ktiles, kfull, interior, a_base,
                      b_base, sta, stb, m0, n0, M, N, K, lda, ldb, tid, offs, afrag, bfrag, acc)
        if async_copy:
            I.cp_async_wait_all()

        store_all(acc, m0 + wm * WM + g, n0 + wn * WN + 2 * t, M, N, alpha, beta,
                  c_ptr + batch * sc * OSZ, d_ptr + z * sd * OSZ, ldc_r * OSZ, ldc_c * OSZ,
                  ldd_r * OSZ, ldd_c * OSZ, extra)

    kernel.nbk_smem_bytes = STAGES * STAGE_BYTES
    kernel.nbk_launch_bounds = (NT, cfg.min_blocks) if cfg.min_blocks else None
    kernel.nbk_threads = NT
    kernel.nbk_mma = mma_description(MMA_K, mma)
    return kernel
