"""The tensor-core GEMM kernel (sm_80 class, and sm_75 for f16): ``D = alpha * A @ B + beta * C``.

Design (per block of ``threads`` threads computing a ``bm x bn`` tile of D):

* operand tiles are staged in dynamic shared memory by a ``stages``-deep ring of ``cp.async``
  copies (16 B each, zero-filled past the matrix edges); on sm_75 or for operands that are not
  16-byte aligned, by ordinary loads instead (correct for any alignment, slower);
* each tile row is ``bk_bytes`` (K-major operand) or ``bm``/``bn`` elements (M/N-major), cut in
  16-byte chunks whose index is XOR-swizzled with the row so that the 8 rows one ``ldmatrix``
  reads fall in 8 different bank groups;
* each warp owns a ``wm x wn`` sub-tile, loads fragments with ``ldmatrix`` (``.trans`` for
  M/N-major 16-bit operands) and issues ``(wm/16) * (wn/8)`` independent ``mma.sync`` per k-step;
* the epilogue applies ``alpha``, ``beta * C`` and the optional fused epilogue to each
  accumulator in registers, and stores D with guarded scalar stores;
* blocks are rasterized in groups of ``group_m`` block-rows for L2 reuse; the batch index is
  ``blockIdx.y``.

Everything shape-dependent (M, N, K, strides, batch strides) is a kernel argument, so a
kernel is compiled once per (kind, layouts, loader, tile config, epilogue) and arch.
"""
from __future__ import annotations

from numba import cuda, float32, float64, int32, int64, uint32

from .. import intrinsics as I
from .config import ELEMENT_BYTES, TileConfig


def _dev(fn):
    return cuda.jit(device=True, inline="always")(fn)


def _swizzle(cpr):
    """16-byte-chunk swizzle for rows of ``cpr`` chunks (conflict-free 8-row ldmatrix)."""
    if cpr >= 8:
        @_dev
        def swz(row, ch):
            return ch ^ (row & 7)
    elif cpr == 4:
        @_dev
        def swz(row, ch):
            return ch ^ ((row >> 1) & 3)
    else:
        raise ValueError(f"unsupported chunks per row: {cpr}")
    return swz


# Per kind: mma k-step in elements (always 32 bytes: two 16-byte chunks), the mma intrinsic.
_MMA = {
    "f16": (16, I.mma_m16n8k16_f16_f32),
    "bf16": (16, I.mma_m16n8k16_bf16_f32),
    "tf32": (8, I.mma_m16n8k8_tf32_f32),
    "3xtf32": (8, I.mma_m16n8k8_tf32_f32),
    "s8": (32, I.mma_m16n8k32_s8_s32),
}


def epilogue_call(epilogue, n_extra):
    """An inline device function ``apply(v, i, j, extra)`` = ``epilogue(v, i, j, *extra)``."""
    if epilogue is None:
        @_dev
        def apply(v, i, j, extra):
            return v
        return apply
    epi = epilogue if hasattr(epilogue, "py_func") else _dev(epilogue)
    args = ", ".join(f"extra[{k}]" for k in range(n_extra))
    ns = {"epi": epi}
    exec(f"def apply(v, i, j, extra):\n    return epi(v, i, j{', ' if n_extra else ''}{args})\n", ns)
    return _dev(ns["apply"])


def _wait_group(n):
    """``cp.async.wait_group n`` as a device function (the count must be a literal there)."""
    src = f"def wait():\n    I.cp_async_wait_group({int(n)})\n"
    ns = {"I": I}
    exec(src, ns)
    return _dev(ns["wait"])


def block_raster(GROUP_M):
    """``(pid, grid_m, grid_n) -> (block row, block column)``: groups of GROUP_M block-rows
    walk N together, so the A rows and B columns a wave of blocks reads stay in L2."""
    @_dev
    def raster(pid, grid_m, grid_n):
        per_group = GROUP_M * grid_n
        first_m = (pid // per_group) * GROUP_M
        rows_in_group = min(grid_m - first_m, GROUP_M)
        return first_m + (pid % per_group) % rows_in_group, (pid % per_group) // rows_in_group
    return raster


# --- global -> shared, shared by the tensor-core kernels (this one and dmma_kernel) ---------
def _tile_loader(ROWS, CPR, swz, kmajor, NT, ESZ, async_copy):
    """``load_tile``: one operand's k-tile into a stage, any position (edges zero-filled).

    The tile is ``ROWS`` rows of ``CPR`` 16-byte chunks (K-major: a row per M/N index, M/N-major:
    a row per k); chunk ``ch`` of row ``row`` sits at chunk ``swz(row, ch)`` of its row.
    """
    EPC = 16 // ESZ  # elements per 16-byte chunk
    ITERS = ROWS * CPR // NT

    @_dev
    def chunk(tid, it, mn0, k0, MN, K):
        """This thread's it-th 16-byte chunk: tile row and column, and its (outer, inner)
        matrix coordinates with their extents (outer strides by ld, inner is contiguous)."""
        cid = tid + it * NT
        row = cid // CPR
        ch = cid % CPR
        if kmajor:
            return row, ch, mn0 + row, k0 + ch * EPC, MN, K
        return row, ch, k0 + row, mn0 + ch * EPC, K, MN

    if async_copy:
        @_dev
        def load_tile(sbase, gptr, mn0, k0, MN, K, ld, tid):
            for it in range(ITERS):
                row, ch, outer, inner, outer_n, inner_n = chunk(tid, it, mn0, k0, MN, K)
                nbytes = 0
                src = gptr
                if outer < outer_n and inner < inner_n:
                    nbytes = min(16, (inner_n - inner) * ESZ)
                    src = gptr + (outer * ld + inner) * ESZ
                I.cp_async_cg(sbase + row * (CPR * 16) + swz(row, ch) * 16, src, 16, nbytes)
    elif ESZ == 8:
        @_dev
        def load_tile(sbase, gptr, mn0, k0, MN, K, ld, tid):
            # Operands not 16-byte aligned (8-byte aligned: any float64 array): element loads.
            sm = cuda.shared.array(0, float64)
            for it in range(ITERS):
                row, ch, outer, inner, outer_n, inner_n = chunk(tid, it, mn0, k0, MN, K)
                dw0 = (sbase - I.smem_addr(sm, 0) + row * (CPR * 16) + swz(row, ch) * 16) // 8
                for w in range(2):
                    v = float64(0)
                    e = inner + w
                    if outer < outer_n and e < inner_n:
                        v = I.ld_global_f64(gptr + (outer * ld + e) * 8)
                    sm[dw0 + w] = v
    else:
        @_dev
        def load_tile(sbase, gptr, mn0, k0, MN, K, ld, tid):
            # Any alignment of the operand: element loads, 32-bit stores to shared memory.
            sm = cuda.shared.array(0, uint32)
            for it in range(ITERS):
                row, ch, outer, inner, outer_n, inner_n = chunk(tid, it, mn0, k0, MN, K)
                word0 = (sbase - I.smem_addr(sm, 0) + row * (CPR * 16) + swz(row, ch) * 16) // 4
                for w in range(4):
                    v = uint32(0)
                    if ESZ == 2:
                        for h in range(2):
                            e = inner + w * 2 + h
                            if outer < outer_n and e < inner_n:
                                a16 = I.ld_global_u16(gptr + (outer * ld + e) * 2)
                                v |= uint32(a16) << (16 * h)
                    else:
                        e = inner + w
                        if outer < outer_n and e < inner_n:
                            v = I.ld_global_u32(gptr + (outer * ld + e) * 4)
                    sm[word0 + w] = v
    return load_tile


def column_groups(rows, cpr, nt, period):
    """How many chunk columns, ``cpr // cg`` apart, each thread of the fast loader takes (its
    ``cg`` columns times rows ``nt // (cpr // cg)`` apart), or 0 where no split works. The rows
    of one thread must sit a whole swizzle period apart, so that its chunks' swizzled offsets
    differ by constants; a second column ``cpr // cg`` chunks over (a multiple of 8: the
    swizzles XOR the low three bits) keeps that true when ``nt // cpr`` rows are fewer than a
    period (the 128x64 float64 tile's M-major a: 64 chunks a row, 128 threads, 2 rows apart).
    """
    cg = 1
    while cg <= cpr:
        span = cpr // cg
        if (cpr % cg == 0 and (cg == 1 or span % 8 == 0) and nt % span == 0
                and (nt // span) % period == 0 and (rows * cpr) % nt == 0):
            return cg
        cg *= 2
    return 0


def _fast_loader(ROWS, CPR, swz, kmajor, NT, ESZ, BK, CG=1):
    """cp.async with the per-chunk arithmetic done once per thread (``setup``).

    A thread's chunks sit RSTEP rows apart in CG chunk columns SPAN apart (column_groups), so
    their global addresses differ by constants and so do their swizzled smem offsets (RSTEP is
    a multiple of the swizzle period, SPAN of the swizzle's XOR range). Measured on H200
    (ncu): the general loader made the integer ALU the busiest pipe (45%) with the tensor pipe
    active 45% of the time. ``load_interior`` takes a k-tile of an interior block with no
    predicate at all, ``load_edge`` any other one (M/N edge from the setup, K edge per
    k-tile). The edge path on the same per-thread state, rather than the general loader's
    per-chunk arithmetic that LICM hoisted out of the k loop, took registers from 246 to 244
    (bf16 128x128), 254 to 240 (tf32 256x128) and 255 + spills to 250 (f64 128x128), and made
    room for double-buffered fragments (bf16: 255 + 164 B of spills before, 254 after).
    Chunk ``it`` of a thread is row step ``it // CG``, column group ``it % CG``.
    """
    EPC = 16 // ESZ
    ITERS = ROWS * CPR // NT
    SPAN = CPR // CG  # chunks between a thread's columns
    RSTEP = NT // SPAN
    SSTEP = RSTEP * CPR * 16
    CSTEP = SPAN * 16  # smem bytes between a thread's columns
    GSTEP = SPAN * EPC * ESZ  # global bytes between them (they run along the contiguous axis)
    NBW = 5  # bits per column group's byte count in st[5] (M/N-major; at most 16)

    @_dev
    def setup(gptr, mn0, MN, ld, tid):
        row0 = tid // SPAN
        ch = tid % SPAN
        soff0 = row0 * (CPR * 16) + swz(row0, ch) * 16
        pstep = RSTEP * ld * ESZ
        if kmajor:
            p0 = gptr + ((mn0 + row0) * ld + ch * EPC) * ESZ
            kadv = BK * ESZ
            nb = 16
            bits = 0
            for it in range(ITERS):
                if mn0 + row0 + (it // CG) * RSTEP < MN:
                    bits |= 1 << it
        else:
            inner = mn0 + ch * EPC
            p0 = gptr + (row0 * ld + inner) * ESZ
            kadv = BK * ld * ESZ
            if CG == 1:  # the bytes of the chunk inside MN
                nb = min(16, (MN - inner) * ESZ) if inner < MN else 0
            else:  # CG fields of NBW bits: the bytes of each column's chunk inside MN
                nb = 0
                for j in range(CG):
                    inner_j = inner + j * SPAN * EPC
                    if inner_j < MN:
                        nb |= min(16, (MN - inner_j) * ESZ) << (NBW * j)
            bits = (1 << ITERS) - 1 if nb > 0 else 0
        kpos = ch * EPC if kmajor else row0  # this thread's first k within a k-tile
        return (int64(p0), int64(pstep), int64(kadv), int64(soff0), int64(bits), int64(nb),
                int64(kpos))

    @_dev
    def col_bytes(st, j):
        """M/N-major: the bytes of column group j's chunk inside MN (0 to 16)."""
        if CG == 1:
            return st[5]
        return (st[5] >> (NBW * j)) & 31

    @_dev
    def chunk_offsets(st, it):
        """(smem, global) byte offsets of chunk it from the thread's first (smem: from its
        first chunk's offset in the tile, st[3])."""
        return (it // CG) * SSTEP + (it % CG) * CSTEP, (it // CG) * st[1] + (it % CG) * GSTEP

    @_dev
    def load_edge(sbase, gptr, st, kt, K):
        p = st[0] + kt * st[2]
        krem = K - kt * BK - st[6]  # elements of K left from this thread's first k
        for it in range(ITERS):
            so, go = chunk_offsets(st, it)
            if kmajor:  # a column's bytes inside K, the same for every row
                nb = min(max((krem - (it % CG) * SPAN * EPC) * ESZ, 0), 16)
                ok = ((st[4] >> it) & 1) != 0 and nb > 0
            else:  # rows k = kt * BK + st[6] + (it // CG) * RSTEP
                nb = col_bytes(st, it % CG)
                ok = nb > 0 and (it // CG) * RSTEP < krem
            I.cp_async_cg(sbase + st[3] + so, p + go if ok else gptr, 16, nb if ok else 0)

    @_dev
    def load_interior(sbase, st, kt):
        # Every chunk in bounds (an interior block, a full k-tile): no predicates at all.
        p = st[0] + kt * st[2]
        for it in range(ITERS):
            so, go = chunk_offsets(st, it)
            I.cp_async_cg(sbase + st[3] + so, p + go, 16, 16)

    LD_F64_IF = _LD_F64_IF

    @_dev
    def load_sync8(sbase, gptr, st, kt, K):
        # 8-byte elements not 16-byte aligned (float64): one predicated 8-byte load per element
        # (branch-free; each store follows its load, so two values at most are live)
        sm = cuda.shared.array(0, float64)
        p = st[0] + kt * st[2]
        krem = K - kt * BK - st[6]
        d0 = (sbase - I.smem_addr(sm, 0) + st[3]) // 8
        for it in range(ITERS):
            go = chunk_offsets(st, it)[1]
            for w in range(2):
                if kmajor:
                    ok = ((st[4] >> it) & 1) != 0 and w + (it % CG) * SPAN * EPC < krem
                else:
                    ok = w * 8 < col_bytes(st, it % CG) and (it // CG) * RSTEP < krem
                sm[d0 + (it // CG) * (SSTEP // 8) + (it % CG) * (CSTEP // 8) + w] = LD_F64_IF(
                    p + go + w * 8, ok)

    return setup, load_edge, load_interior, load_sync8


def stage_loader(a_geom, b_geom, NT, ESZ, BK, A_BYTES, async_copy, what):
    """``(setup_a, setup_b, load_stage)``: the k-tile ``t`` of A and B into one stage.

    ``a_geom``/``b_geom`` = (rows, 16-byte chunks per row, swizzle, swizzle period in rows,
    K-major?). Interior blocks and full k-tiles take the predicate-free loader, the rest the
    edge loader on the same per-thread state; float64 operands that are not 16-byte aligned
    predicated 8-byte loads on that state (the general loader spilled 108 B in the 128x128 f64
    kernel); other operands that are not 16-byte aligned (and geometries column_groups cannot
    split) the general one.
    """
    for rows, cpr, _, _, _ in (a_geom, b_geom):
        if (rows * cpr) % NT:
            raise ValueError(f"{what}: tile chunks do not divide among {NT} threads")
    cg_a, cg_b = (column_groups(g[0], g[1], NT, g[3]) for g in (a_geom, b_geom))
    setup_a, load_a_edge, load_a_inner, load_a_sync8 = _fast_loader(*a_geom[:3], a_geom[4], NT,
                                                                     ESZ, BK, max(cg_a, 1))
    setup_b, load_b_edge, load_b_inner, load_b_sync8 = _fast_loader(*b_geom[:3], b_geom[4], NT,
                                                                     ESZ, BK, max(cg_b, 1))
    fast = cg_a > 0 and cg_b > 0
    if fast and not async_copy and ESZ == 8:
        @_dev
        def load_stage(sbase, t, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N, K,
                       lda, ldb, tid):
            load_a_sync8(sbase, a_base, sta, t, K)
            load_b_sync8(sbase + A_BYTES, b_base, stb, t, K)
    elif fast and async_copy:
        @_dev
        def load_stage(sbase, t, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N, K,
                       lda, ldb, tid):
            if t < kfull and interior:
                load_a_inner(sbase, sta, t)
                load_b_inner(sbase + A_BYTES, stb, t)
            else:
                load_a_edge(sbase, a_base, sta, t, K)
                load_b_edge(sbase + A_BYTES, b_base, stb, t, K)
    else:
        load_a = _tile_loader(*a_geom[:3], a_geom[4], NT, ESZ, async_copy)
        load_b = _tile_loader(*b_geom[:3], b_geom[4], NT, ESZ, async_copy)

        @_dev
        def load_stage(sbase, t, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N, K,
                       lda, ldb, tid):
            load_a(sbase, a_base, m0, t * BK, M, K, lda, tid)
            load_b(sbase + A_BYTES, b_base, n0, t * BK, N, K, ldb, tid)

    return setup_a, setup_b, load_stage


def stage_refill(load_stage, STAGES, STAGE_BYTES, async_copy):
    """``next_stage(...)``: k-tile kt + STAGES - 1 into the slot of k-tile kt - 1 (which every
    warp has read: the barrier before), and its commit group; for both tensor-core kernels."""
    @_dev
    def next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N, K,
                   lda, ldb, tid):
        nt = kt + STAGES - 1
        if nt < ktiles:
            load_stage(smem + (nt % STAGES) * STAGE_BYTES, nt, kfull, interior, a_base, b_base,
                       sta, stb, m0, n0, M, N, K, lda, ldb, tid)
        if async_copy:
            I.cp_async_commit_group()
    return next_stage


# Source templates per output kind, filled with str.format: loading C at {addr} (if {ok}) as
# f32/s32, the 16 result bits of {v}, and storing {v} at {addr} (if {ok}).
_C_LOAD = {
    "bf16": "I.bits_to_f32(uint32(I.ld_global_u16_if({addr}, {ok})) << 16)",
    "f16": "I.f16_bits_to_f32(I.ld_global_u16_if({addr}, {ok}))",
    "f32": "I.ld_global_f32_if({addr}, {ok})",
    "s32": "I.ld_global_s32_if({addr}, {ok})",
}
_TO_BITS = {"bf16": "I.cvt_f32_to_bf16(float32({v}))", "f16": "I.cvt_f32_to_f16(float32({v}))"}
_D_STORE = {
    **{k: "I.st_global_u16_if({addr}, " + bits + ", {ok})" for k, bits in _TO_BITS.items()},
    "f32": "I.st_global_f32_if({addr}, float32({v}), {ok})",
    "s32": "I.st_global_s32_if({addr}, int32({v}), {ok})",
}
_OUT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "s32": 4, "f64": 8}


def _predicated_f64():
    """``ld_global_f64_if`` / ``st_global_f64_if`` for the float64 epilogue: the shipped ones
    once nbkernels.intrinsics has them, else declared here with the same spec as the 32-bit
    predicated accesses (nbkernels/intrinsics/memory.py, ``_predicated``)."""
    if hasattr(I, "ld_global_f64_if"):
        return I.ld_global_f64_if, I.st_global_f64_if
    import numpy as np

    from ..intrinsics import sim

    pred = "{ .reg .pred %nbk_p; setp.ne.u32 %nbk_p, $pred, 0; "

    def ld_sim(addr, ok):
        if not ok:
            return np.float64(0)
        return sim.global_bytes(int(addr), 8, "ld_global_f64_if").view(np.float64)[0]

    def st_sim(addr, value, ok):
        if ok:
            sim.global_bytes(int(addr), 8, "st_global_f64_if").view(np.float64)[0] = value

    ld = I.define("ld_global_f64_if", pred + "mov.f64 $d, 0d0000000000000000; "
                  "@%nbk_p ld.global.f64 $d, [$addr]; }", outputs=["d:f64"],
                  inputs=["addr:u64", "pred:u32"], memory=True, sass=["LDG"], simulate=ld_sim,
                  doc="Load one f64 if pred is non-zero, else return 0 (the address is not read).")
    st = I.define("st_global_f64_if", pred + "@%nbk_p st.global.f64 [$addr], $value; }",
                  inputs=["addr:u64", "value:f64", "pred:u32"], memory=True, sass=["STG"],
                  simulate=st_sim,
                  doc="Store one f64 if pred is non-zero (the address is not touched otherwise).")
    return ld, st


_LD_F64_IF, _ST_F64_IF = _predicated_f64()
_C_LOAD["f64"] = "LD_F64_IF({addr}, {ok})"
_D_STORE["f64"] = "ST_F64_IF({addr}, float64({v}), {ok})"


def element_source(x, acc, row, col, epilogue, extra_args, c_load=None, pad="    "):
    """Generated lines computing one result element: ``alpha * acc``, plus ``beta *`` the C
    value ``c_load`` reads, through the fused epilogue at (``row``, ``col``); and the name of
    the value. Names are suffixed with ``x`` (each assigned once: see below)."""
    lines, val = [f"{pad}a{x} = alpha * {acc}"], f"a{x}"
    if c_load is not None:
        lines.append(f"{pad}b{x} = {val} + beta * {c_load}")
        val = f"b{x}"
    if epilogue is not None:
        lines.append(f"{pad}e{x} = epi({val}, {row}, {col}{extra_args})")
        val = f"e{x}"
    return lines, val


def _unrolled_epilogue(MF, NF, out_kind, epilogue, n_extra, pair=False):
    """Straight-line, branch-free epilogue over the accumulators, generated as source text.

    Measured reasons: a loop here is not fully unrolled by NVVM once its body holds the guarded
    load/store, and one run-time index moves the whole accumulator array to local memory (512 B
    stack frame, 96 STL / 32 LDL per thread for a 64x64 warp tile); and numba's IR inliner copies
    a callee's scope once per basic block, so an epilogue with an ``if`` per element took 60-100 s
    to compile. Guards are predicates of the load/store instructions instead, and ``beta`` picks
    one of two straight-line bodies.
    """
    extra_args = "".join(f", extra[{k}]" for k in range(n_extra))

    def body(with_c, indent, tag):
        # Every generated name is assigned once (numba's SSA pass is quadratic in reassignments
        # of one name: 15 s here), and each output row is its own basic block (numba's lowering
        # scans a block's assignments once per variable defined in it: 17 s for one block).
        pad = " " * indent
        out = []
        for f in range(MF):
            for h in range(2):
                r = f"{tag}{f}_{h}"
                out += [f"{pad}row{r} = row0 + {f * 16 + 8 * h}",
                        f"{pad}if row{r} < M:",
                        f"{pad}    crow{r} = c_base + row{r} * ldc_r",
                        f"{pad}    drow{r} = d_base + row{r} * ldd_r"]
                for n in range(NF):
                    vals = []
                    for e in range(2):
                        x = f"{r}_{n}_{e}"
                        col = f"(col0 + {n * 8 + e})"
                        out.append(f"{pad}    ok{x} = {col} < N")
                        load = _C_LOAD[out_kind].format(addr=f"crow{r} + {col} * ldc_c",
                                                        ok=f"ok{x}") if with_c else None
                        # the column is clamped: an epilogue reading bias[j] must not read past N
                        # for the lanes beyond the edge, whose results are not stored
                        lines, val = element_source(x, f"acc[{f}, {n}, {2 * h + e}]", f"row{r}",
                                                    f"min({col}, N - 1)", epilogue, extra_args,
                                                    load, pad + "    ")
                        out += lines
                        vals.append(val)
                        if not pair:
                            store = _D_STORE[out_kind].format(addr=f"drow{r} + {col} * ldd_c",
                                                              v=val, ok=f"ok{x}")
                            out.append(f"{pad}    {store}")
                    if pair:
                        # Two neighbouring 16-bit results in one 32-bit store; a lone last column
                        # (odd N) is stored alone. ncu: scalar stores used 8 of 32 B per sector.
                        x = f"{r}_{n}"
                        col = f"(col0 + {n * 8})"
                        lo, hi = (_TO_BITS[out_kind].format(v=v) for v in vals)
                        out += [f"{pad}    okp{x} = ({col} + 1) < N",
                                f"{pad}    okl{x} = ({col} < N) & (({col} + 1) >= N)",
                                f"{pad}    lo{x} = {lo}",
                                f"{pad}    I.st_global_u32_if(drow{r} + {col} * ldd_c, "
                                f"uint32(lo{x}) | (uint32({hi}) << 16), okp{x})",
                                f"{pad}    I.st_global_u16_if(drow{r} + {col} * ldd_c, "
                                f"lo{x}, okl{x})"]
        return out

    lines = ["def store_all(acc, row0, col0, M, N, alpha, beta, c_base, d_base,",
             "              ldc_r, ldc_c, ldd_r, ldd_c, extra):",
             "    if beta != 0:", *body(True, 8, "p"), "    else:", *body(False, 8, "q")]
    ns = {"I": I, "uint32": uint32, "float32": float32, "float64": float64, "int32": int32,
          "LD_F64_IF": _LD_F64_IF, "ST_F64_IF": _ST_F64_IF}
    if epilogue is not None:
        ns["epi"] = epilogue if hasattr(epilogue, "py_func") else _dev(epilogue)
    exec("\n".join(lines) + "\n", ns)
    return _dev(ns["store_all"])


KSTEPS_MAX = 4  # k-steps per stage the kernel unrolls (bk_bytes / 32)

OUT_KIND = {"f16": "f16", "bf16": "bf16", "tf32": "f32", "3xtf32": "f32", "s8": "s32"}


def build_kernel(cfg: TileConfig, kind: str, a_kmajor: bool, b_kmajor: bool, async_copy: bool,
                 sm75: bool = False, epilogue=None, n_extra: int = 0, pair_store: bool = False,
                 partial: bool = False):
    """The kernel for one (config, kind, layouts, loader, epilogue); see the module docstring."""
    if kind == "f64":
        from . import dmma_kernel

        return dmma_kernel.build_kernel(cfg, a_kmajor, b_kmajor, async_copy, epilogue, n_extra,
                                        partial)
    if kind not in _MMA:
        raise ValueError(f"tensor-core GEMM has no kind {kind!r}")
    if KSTEPS_MAX < cfg.bk_bytes // 32:
        raise ValueError(f"{cfg}: at most {KSTEPS_MAX} k-steps per stage")
    if (not a_kmajor or not b_kmajor) and ELEMENT_BYTES[kind] != 2:
        raise ValueError(f"{kind}: only K-major operands (ldmatrix.trans moves 16-bit elements)")
    if not async_copy and ELEMENT_BYTES[kind] not in (2, 4):
        raise ValueError(f"{kind}: the ordinary-load path takes 16- and 32-bit elements")
    if sm75 and (kind != "f16" or async_copy):
        raise ValueError("the sm_75 variant is f16 with ordinary loads")
    ESZ = ELEMENT_BYTES[kind]
    EPC = 16 // ESZ  # elements per 16-byte chunk
    KSTEP, mma = _MMA[kind]
    BM, BN, BKB, STAGES = cfg.bm, cfg.bn, cfg.bk_bytes, cfg.stages
    BK = BKB // ESZ
    KSTEPS = BK // KSTEP
    WARPS_N = cfg.warps_n
    WM, WN = BM // cfg.warps_m, BN // cfg.warps_n
    MF, NF = WM // 16, WN // 8
    NT = cfg.threads
    # Shared-memory tile geometry: rows x chunks-per-row (16-byte chunks).
    A_ROWS, A_CPR = (BM, BKB // 16) if a_kmajor else (BK, BM * ESZ // 16)
    B_ROWS, B_CPR = (BN, BKB // 16) if b_kmajor else (BK, BN * ESZ // 16)
    A_BYTES, B_BYTES = A_ROWS * A_CPR * 16, B_ROWS * B_CPR * 16
    STAGE_BYTES = A_BYTES + B_BYTES
    swz_a, swz_b = _swizzle(A_CPR), _swizzle(B_CPR)
    SWZ_PERIOD = 8  # rows after which both swizzles repeat
    # partial: a split-K slice writes its raw f32/s32 accumulators to a workspace; the
    # reduction kernel (below) applies beta * C, the epilogue and the conversion.
    out_kind = ("s32" if kind == "s8" else "f32") if partial else OUT_KIND[kind]
    if partial and (epilogue is not None or pair_store):
        raise ValueError("split-K partials take no epilogue and no paired stores")
    split3 = kind == "3xtf32"
    tf32_round = kind in ("tf32", "3xtf32")
    is_int = kind == "s8"
    FRAG_DB = bool(cfg.frag_db)
    if FRAG_DB and KSTEPS < 2:
        raise ValueError(f"{cfg}: fragment double-buffering needs >= 2 k-steps per stage")
    NBUF = 2 if FRAG_DB else 1
    wait_stages = _wait_group(STAGES - 2)
    raster = block_raster(cfg.group_m)

    # --- global -> shared ---------------------------------------------------------------
    setup_a, setup_b, load_stage = stage_loader(
        (A_ROWS, A_CPR, swz_a, SWZ_PERIOD, a_kmajor), (B_ROWS, B_CPR, swz_b, SWZ_PERIOD, b_kmajor),
        NT, ESZ, BK, A_BYTES, async_copy, str(cfg))

    # --- shared -> registers -----------------------------------------------------------------
    @_dev
    def a_offset(f, kk, lane, wm):
        if a_kmajor:
            row = wm * WM + f * 16 + (lane % 16)
            ch = kk * 2 + lane // 16
            return row * (A_CPR * 16) + swz_a(row, ch) * 16
        j = lane // 8
        krow = kk * KSTEP + 8 * (j // 2) + lane % 8
        ch = (wm * WM + f * 16 + 8 * (j % 2)) // EPC
        return krow * (A_CPR * 16) + swz_a(krow, ch) * 16

    @_dev
    def b_offset(p, kk, lane, wn):
        j = lane // 8
        if b_kmajor:
            row = wn * WN + p * 16 + 8 * (j // 2) + lane % 8
            ch = kk * 2 + (j % 2)
            return row * (B_CPR * 16) + swz_b(row, ch) * 16
        krow = kk * KSTEP + 8 * (j % 2) + lane % 8
        ch = (wn * WN + p * 16 + 8 * (j // 2)) // EPC
        return krow * (B_CPR * 16) + swz_b(krow, ch) * 16

    @_dev
    def ld_a(addr):
        if a_kmajor:
            return I.ldmatrix_x4(addr)
        return I.ldmatrix_x4_trans(addr)

    @_dev
    def ld_b(addr):
        if b_kmajor:
            return I.ldmatrix_x4(addr)
        return I.ldmatrix_x4_trans(addr)

    @_dev
    def tf32(x):
        return I.f32_to_tf32(I.bits_to_f32(x))

    @_dev
    def tf32_small(x, big):
        return I.f32_to_tf32(I.bits_to_f32(x) - I.bits_to_f32(big))

    if sm75:
        @_dev
        def do_mma(a, b, c):
            d = I.mma_m16n8k8_f16_f32((a[0], a[1]), b[0], c)
            return I.mma_m16n8k8_f16_f32((a[2], a[3]), b[1], d)
    else:
        @_dev
        def do_mma(a, b, c):
            return mma(a, b, c)

    @_dev
    def load_frags(sa_base, sb_base, kk, buf, lane, wm, wn, afrag, bfrag, asmall, bsmall):
        """k-step kk's A and B fragments (tf32: rounded, 3xtf32: and the remainders)."""
        for f in range(MF):
            d = ld_a(sa_base + a_offset(f, kk, lane, wm))
            for r in range(4):
                afrag[buf, f, r] = d[r]
        for p in range(NF // 2):
            d = ld_b(sb_base + b_offset(p, kk, lane, wn))
            bfrag[buf, 2 * p, 0] = d[0]
            bfrag[buf, 2 * p, 1] = d[1]
            bfrag[buf, 2 * p + 1, 0] = d[2]
            bfrag[buf, 2 * p + 1, 1] = d[3]
        if tf32_round:
            for f in range(MF):
                for r in range(4):
                    big = tf32(afrag[buf, f, r])
                    if split3:
                        asmall[buf, f, r] = tf32_small(afrag[buf, f, r], big)
                    afrag[buf, f, r] = big
            for n in range(NF):
                for r in range(2):
                    big = tf32(bfrag[buf, n, r])
                    if split3:
                        bsmall[buf, n, r] = tf32_small(bfrag[buf, n, r], big)
                    bfrag[buf, n, r] = big

    @_dev
    def mmas(buf, afrag, bfrag, asmall, bsmall, acc):
        for f in range(MF):
            for n in range(NF):
                a = (afrag[buf, f, 0], afrag[buf, f, 1], afrag[buf, f, 2], afrag[buf, f, 3])
                b = (bfrag[buf, n, 0], bfrag[buf, n, 1])
                c = (acc[f, n, 0], acc[f, n, 1], acc[f, n, 2], acc[f, n, 3])
                if split3:
                    c = do_mma((asmall[buf, f, 0], asmall[buf, f, 1], asmall[buf, f, 2],
                                asmall[buf, f, 3]), b, c)
                    c = do_mma(a, (bsmall[buf, n, 0], bsmall[buf, n, 1]), c)
                d = do_mma(a, b, c)
                for i in range(4):
                    acc[f, n, i] = d[i]

    @_dev
    def kstep(sa_base, sb_base, kk, lane, wm, wn, afrag, bfrag, asmall, bsmall, acc):
        load_frags(sa_base, sb_base, kk, 0, lane, wm, wn, afrag, bfrag, asmall, bsmall)
        mmas(0, afrag, bfrag, asmall, bsmall, acc)

    next_stage = stage_refill(load_stage, STAGES, STAGE_BYTES, async_copy)

    @_dev
    def db_kstep(kk, sa_base, nx_base, kt, ktiles, smem, kfull, interior, a_base, b_base, sta,
                 stb, m0, n0, M, N, K, lda, ldb, tid, lane, wm, wn, afrag, bfrag, asmall, bsmall,
                 acc):
        """k-step kk (a literal) with fragment double-buffering: the next k-step's fragments
        (at the last k-step: the next stage's first, after the barrier of k-step KSTEPS-2) are
        loaded before this k-step's MMAs are issued, so no MMA waits on its own ldmatrix."""
        if kk + 1 < KSTEPS:
            load_frags(sa_base, sa_base + A_BYTES, kk + 1, (kk + 1) % 2, lane, wm, wn, afrag,
                       bfrag, asmall, bsmall)
        else:
            load_frags(nx_base, nx_base + A_BYTES, 0, (kk + 1) % 2, lane, wm, wn, afrag, bfrag,
                       asmall, bsmall)
        if kk == 0:  # the slot of k-tile kt - 1: every warp has read it (the last barrier)
            next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0, n0, M, N,
                       K, lda, ldb, tid)
        mmas(kk % 2, afrag, bfrag, asmall, bsmall, acc)
        if kk == KSTEPS - 2:
            # k-tile kt + 1 has landed (the next k-step reads it) and kt's slot is free
            if async_copy:
                wait_stages()
            cuda.syncthreads()

    acc_t = int32 if is_int else float32
    if pair_store and out_kind not in _TO_BITS:
        raise ValueError(f"paired stores are for 16-bit results, not {out_kind}")
    store_all = _unrolled_epilogue(MF, NF, out_kind, epilogue, n_extra, pair_store)

    OSZ = _OUT_BYTES[out_kind]

    @cuda.jit
    def kernel(A, B, C, D, M, N, K, lda, ldb, ldc_r, ldc_c, ldd_r, ldd_c,
               sa, sb, sc, sd, alpha, beta, grid_m, grid_n, splits, kchunk, extra):
        # A, B, C, D are 1-D views starting at each operand's first element; all indexing is
        # by address from here on (cp.async and the predicated epilogue take addresses).
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
        bm_idx, bn_idx = raster(cuda.blockIdx.x, grid_m, grid_n)
        m0 = bm_idx * BM
        n0 = bn_idx * BN
        # blockIdx.y = batch * splits + split; split s reduces K in [s * kchunk, (s+1) * kchunk)
        z = cuda.blockIdx.y
        batch = z // splits
        k_begin = (z % splits) * kchunk
        if splits > 1:
            K = max(min(K - k_begin, kchunk), 0)
        a_base = a_ptr + (batch * sa + k_begin * (1 if a_kmajor else lda)) * ESZ
        b_base = b_ptr + (batch * sb + k_begin * (1 if b_kmajor else ldb)) * ESZ

        acc = cuda.local.array((MF, NF, 4), acc_t)
        for f in range(MF):
            for n in range(NF):
                for i in range(4):
                    acc[f, n, i] = 0
        afrag = cuda.local.array((NBUF, MF, 4), uint32)
        bfrag = cuda.local.array((NBUF, NF, 2), uint32)
        asmall = cuda.local.array((NBUF, MF, 4), uint32)
        bsmall = cuda.local.array((NBUF, NF, 2), uint32)

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
            load_frags(smem, smem + A_BYTES, 0, 0, lane, wm, wn, afrag, bfrag, asmall, bsmall)
            for kt in range(ktiles):
                sa_base = smem + (kt % STAGES) * STAGE_BYTES
                nx_base = smem + ((kt + 1) % STAGES) * STAGE_BYTES
                db_kstep(0, sa_base, nx_base, kt, ktiles, smem, kfull, interior, a_base, b_base,
                         sta, stb, m0, n0, M, N, K, lda, ldb, tid, lane, wm, wn, afrag, bfrag,
                         asmall, bsmall, acc)
                db_kstep(1, sa_base, nx_base, kt, ktiles, smem, kfull, interior, a_base, b_base,
                         sta, stb, m0, n0, M, N, K, lda, ldb, tid, lane, wm, wn, afrag, bfrag,
                         asmall, bsmall, acc)
                if KSTEPS > 2:
                    db_kstep(2, sa_base, nx_base, kt, ktiles, smem, kfull, interior, a_base,
                             b_base, sta, stb, m0, n0, M, N, K, lda, ldb, tid, lane, wm, wn,
                             afrag, bfrag, asmall, bsmall, acc)
                if KSTEPS > 3:
                    db_kstep(3, sa_base, nx_base, kt, ktiles, smem, kfull, interior, a_base,
                             b_base, sta, stb, m0, n0, M, N, K, lda, ldb, tid, lane, wm, wn,
                             afrag, bfrag, asmall, bsmall, acc)
        else:
            for kt in range(ktiles):
                if async_copy:
                    wait_stages()
                cuda.syncthreads()
                if not async_copy:
                    next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0,
                               n0, M, N, K, lda, ldb, tid)
                sa_base = smem + (kt % STAGES) * STAGE_BYTES
                sb_base = sa_base + A_BYTES
                # The k-steps of a stage are unrolled by hand (numba leaves a loop here, and the
                # loop kept ptxas from loading step kk+1's fragments under step kk's MMAs).
                kstep(sa_base, sb_base, 0, lane, wm, wn, afrag, bfrag, asmall, bsmall, acc)
                if async_copy:  # the refill's copies after the first k-step (perf-notes v9)
                    next_stage(smem, kt, ktiles, kfull, interior, a_base, b_base, sta, stb, m0,
                               n0, M, N, K, lda, ldb, tid)
                if KSTEPS > 1:
                    kstep(sa_base, sb_base, 1, lane, wm, wn, afrag, bfrag, asmall, bsmall, acc)
                if KSTEPS > 2:
                    kstep(sa_base, sb_base, 2, lane, wm, wn, afrag, bfrag, asmall, bsmall, acc)
                if KSTEPS > 3:
                    kstep(sa_base, sb_base, 3, lane, wm, wn, afrag, bfrag, asmall, bsmall, acc)
        if async_copy:
            I.cp_async_wait_all()

        # --- epilogue: alpha, beta * C, fused function, guarded stores ----------------------
        store_all(acc, m0 + wm * WM + (lane >> 2), n0 + wn * WN + 2 * (lane & 3), M, N,
                  alpha, beta, c_ptr + batch * sc * OSZ, d_ptr + z * sd * OSZ,
                  ldc_r * OSZ, ldc_c * OSZ, ldd_r * OSZ, ldd_c * OSZ, extra)

    kernel.nbk_smem_bytes = STAGES * STAGE_BYTES
    kernel.nbk_launch_bounds = (NT, cfg.min_blocks) if cfg.min_blocks else None
    kernel.nbk_threads = NT
    return kernel


def build_reduce(out_kind: str, epilogue=None, n_extra: int = 0):
    """Split-K reduction: D = sum of the splits' partials + beta * C, epilogue, conversion.

    W holds ``batch * splits`` partial M x N matrices (f32, or s32 for int8), contiguous.
    One thread per output element; blockIdx.y is the batch index.
    """
    acc_t = int32 if out_kind == "s32" else float32
    wsz = 4
    OSZ = _OUT_BYTES[out_kind]
    load_w = I.ld_global_s32 if out_kind == "s32" else I.ld_global_f32
    apply_epi = epilogue_call(epilogue, n_extra)
    ns = {"I": I, "uint32": uint32, "float32": float32, "int32": int32}
    exec("def load_c(ca, ok):\n    return " + _C_LOAD[out_kind].format(addr="ca", ok="ok") + "\n"
         "def store_d(da, v, ok):\n    " + _D_STORE[out_kind].format(addr="da", v="v", ok="ok")
         + "\n", ns)
    load_c, store_d = _dev(ns["load_c"]), _dev(ns["store_d"])

    @cuda.jit
    def reduce(W, C, D, M, N, splits, ldc_r, ldc_c, ldd_r, ldd_c, sc, sd, beta, extra):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        batch = cuda.blockIdx.y
        ok = i < M * N
        if ok:
            m = i // N
            n = i % N
            w = int64(I.gmem_addr(W, 0)) + (batch * splits * M * N + i) * wsz
            v = acc_t(0)
            for s in range(splits):
                v += load_w(w + s * M * N * wsz)
            if beta != 0:
                v += beta * load_c(int64(I.gmem_addr(C, 0))
                                   + (batch * sc + m * ldc_r + n * ldc_c) * OSZ, ok)
            v = apply_epi(v, m, n, extra)
            store_d(int64(I.gmem_addr(D, 0)) + (batch * sd + m * ldd_r + n * ldd_c) * OSZ, v, ok)

    reduce.nbk_smem_bytes = 0
    reduce.nbk_threads = 256
    return reduce
