"""The Hopper GEMM kernel (sm_90a): warp-specialized TMA producer, wgmma consumers.

Design (per persistent block of ``128 * (1 + bm/64)`` threads):

* warpgroup 0 is the producer: it gives registers back (``setmaxnreg.dec 40``) and one of its
  threads walks the block's tiles and k-tiles, waiting for a free stage of the ``stages``-deep
  shared-memory ring (its ``empty`` mbarrier), announcing the stage's bytes on its ``full``
  mbarrier and issuing the TMA box copies of A and B into it. TMA zero-fills past the matrix
  edges, so any M, N, K works without predicates in the main loop;
* warpgroups 1.. are consumers (``setmaxnreg.inc``: what the register file leaves them).
  Cooperative tiles: each consumer owns 64 rows of every tile, a ``64 x bn`` f32 accumulator
  (``bn / 2`` registers per thread). Ping-pong tiles: two consumers take alternate tiles of
  the block whole (``bm / 64`` accumulators each), so that one's epilogue runs under the
  other's main loop; the ring's order of stages alternates them. Per k-tile a consumer waits
  for the stage's ``full`` barrier, issues ``64 / 16`` wgmma (A and B from shared memory by
  descriptor), commits, and waits for all but the newest ``cfg.depth`` groups (1 by
  default), then frees the stage of the oldest finished k-tile: ``depth`` k-tiles of wgmma stay in
  flight under the wait;
* operands are staged as 128-byte rows with the 128-byte swizzle (TMA writes it, wgmma
  reads it): K-major A or B as one row per M (N) index, M- or N-major ones as one row per
  k, in 64-wide blocks; 16-bit operands take either major with the descriptor's transpose
  bit, so row- and column-major inputs and transposed views need no copy;
* after a tile's last k-tile the consumers apply ``alpha``, ``beta * C`` and the fused
  epilogue to the accumulators in registers and store D, while the producer already fills
  the ring for the next tile: tiles inside the matrix's columns with 16-byte aligned rows and
  no ``beta * C`` go through 2 KB of shared memory per warp (``stmatrix``) and 16-byte stores
  of whole rows (``staged_epilogue``, the default), the others through the sm_80 kernel's
  guarded stores (shared; everywhere with ``staged=False``);
* tiles are visited in groups of ``group_m`` tile-rows (L2 reuse); blocks take every
  ``gridDim.x``-th tile (one block per SM: the ring takes most of the shared memory).

The two tensor maps (A, B) travel by value in the launch's parameters, as CUDA's
``__grid_constant__`` tensor maps do: the kernel takes them as a ``uint8[2, 128]`` array, and
the launcher passes that array's 256 bytes in place of its data pointer (``nbk_by_value``,
:func:`nbkernels.launch.by_value_ptx`). A call on new arrays encodes new maps on the host and
nothing else: no device copy, nothing to keep alive after the launch, and a CUDA graph that
captures the launch captures its maps. In numba's simulator the array is an ordinary one.

Clusters (``cfg.cluster == 2``, launched with a (2, 1, 1) cluster shape): the two blocks of a
cluster walk the same sequence of tile *pairs* (tile rows 2p and 2p + 1, the same columns), so
they run the same number of k-tiles in lock-step; block rank r computes tile row 2p + r. Per
stage each producer loads its own A box and half of the shared B tile (K-major B: the box of
rows ``r * bn/2 ...``; N-major B: the 64-column boxes ``j`` with ``j % 2 == r``) with a TMA
multicast into both blocks' shared memory at the same offset, which completes the bytes on the
``full`` barrier at the same offset in both; each block's ``full`` barrier therefore expects
its whole stage (its A + all of B), announced by its own producer. A slot may be refilled only
when the consumers of both blocks have freed it: each consumer arrives on its own ``empty``
barrier and, through ``mapa``, on the peer's (twice the arrivals per phase). A cluster barrier
after the barriers' initialisation (``fence.mbarrier_init``) makes them visible to the peer
before its first multicast or arrival, and one before exit keeps both blocks (and their shared
memory) alive until the last remote arrival. The second tile of a pair past the matrix's last
row still loads (TMA zero-fills, the bytes still arrive) but stores nothing.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np
from numba import cuda, float32, int32, int64, uint32, uint64

from .. import intrinsics as I
from ..arch import Arch
from ..intrinsics import descriptors as D
from .mma_kernel import OUT_KIND, _OUT_BYTES, _TO_BITS, _dev, _unrolled_epilogue, element_source
from .wgmma_config import BK, ROW_BYTES, WARP_STAGING, WgmmaConfig

SUPPORTED_KINDS = ("bf16", "f16")
_WGMMA = {"bf16": I.wgmma_bf16_f32_ss, "f16": I.wgmma_f16_f32_ss}
KSTEP = 16  # K of one wgmma for 16-bit types
BOX = 64  # elements per 128-byte swizzled row
PRODUCER_REGS = 40
STORER_REGS = 64  # the producer's registers when its warps also store staged tiles (offload)
REGISTER_FILE = 65536  # 32-bit registers per SM, the pool setmaxnreg moves registers within


def consumer_regs(consumers: int, producer: int = PRODUCER_REGS) -> int:
    """Registers per consumer thread once the producer has given all but 40 back.

    setmaxnreg moves registers within what the block was given at launch: ptxas gives a
    kernel that uses setmaxnreg the cap its launch bound allows (65536 / threads, in steps of
    8, at most 255), so the pool is that times the threads, not the whole register file; a
    request past the pool never returns (the kernel hangs). 240 for one consumer, 232 for
    two (CUTLASS's pair), 152 for three, 104 for four."""
    threads = 128 * (1 + consumers)
    cap = min(255, REGISTER_FILE // threads) // 8 * 8
    free = (cap * threads - 128 * producer) // (128 * consumers)
    return min(240, free // 8 * 8)


BLOCKS_PER_SM = 1  # the ring takes most of the shared memory


def split_tail(tiles: int, blocks: int, ktiles: int) -> int:
    """Split tail: how many tiles (the last in the tile order) a launch of ``blocks`` blocks
    over ``tiles`` tiles of ``ktiles`` k-tiles splits into two K halves: those of a last
    partial wave that fills at most half the blocks (all of them with fewer tiles than
    blocks), where each half gets a k-tile; else 0. The kernel computes the same in its
    source (``tail``). (A form for fuller last waves, whose tiles gave their last k-tiles to
    the blocks without a tile in that wave, lost 7.5-12% at 4096^3: perf-notes s29.)"""
    tail = tiles % blocks
    return tail if 2 * tail <= blocks and ktiles >= 2 else 0


def streamk_grid(tiles: int, sms: int) -> int:
    """Blocks of a split-tail launch: one per SM, or two per tile where that fills at most
    every SM (each tile is then split), or one per tile."""
    return 2 * tiles if 2 * tiles <= sms else min(tiles, sms)


def partial_floats(cfg: WgmmaConfig) -> int:
    """Split tail: the float32 partial sums left for the owner of a split tile (every consumer
    thread's accumulator registers: the whole tile); the workspace holds one such slot per
    split tile."""
    return cfg.bm * cfg.bn


def _rows_storer():
    """``store_rows(buf, lane, at, rows, ld)``: a warp's staged 64-column chunk (16 rows of
    128 bytes at ``buf``, 16-byte words XOR-swizzled by the row) read back and stored to its
    rows at ``at`` (the chunk's first element of the warp's first row; rows ``ld`` bytes
    apart), 16 bytes a lane, evict-first; rows from ``rows`` on are not stored. Each
    instruction writes 4 whole rows of 128 bytes, a staged row per 8 lanes. Straight-line
    source (one basic block: see ``_unrolled_epilogue``). No warp barrier at the end: every
    staging begins with one, which orders these reads before it. (A barrier here, inside the
    k-loop of deferred stores, moved the loop's counters and descriptors off the uniform
    datapath: 16 R2UR instead of 6.)"""
    src = ["def store_rows(buf, lane, at, rows, ld):"]
    for i in range(4):  # staged rows 4i .. 4i + 3
        src += [f"    gr{i} = {4 * i} + (lane >> 3)",
                f"    v{i} = I.ld_shared_v4(buf + gr{i} * 128 + (((lane & 7) ^ (gr{i} & 7)) << 4))",
                f"    I.st_global_cs_v4_if(at + gr{i} * ld + 16 * (lane & 7), "
                f"(v{i}[0], v{i}[1], v{i}[2], v{i}[3]), uint32(gr{i} < rows))"]
    ns = {"I": I, "uint32": uint32}
    exec("\n".join(src) + "\n", ns)  # noqa: S102
    return _dev(ns["store_rows"])


store_rows = _rows_storer()


def staged_epilogue(NF, out_kind, epilogue, n_extra, offload=False, defer=0):
    """The epilogue of a tile whose ``8 NF`` columns all lie inside the matrix, for 16-bit
    results in 16-byte aligned rows and ``beta == 0``, staged through 2 KB of shared memory per
    warp.

    Per 64-column chunk of the warp's 16 x ``8 NF`` strip: alpha and the fused epilogue per
    element in registers (as the sm_80 kernel's epilogue), the results packed into
    32-bit pairs, written with four ``stmatrix.x4`` (each n8 fragment half is one 8 x 8 matrix)
    into 16 staged rows of 128 bytes whose 16-byte chunks are XOR-swizzled by the row (both the
    stores and the reads below are free of bank conflicts), then read back as 16-byte words, a
    staged row per 8 lanes, and stored with 16-byte global stores: each instruction writes 4
    whole rows of 128 bytes, every 32-byte sector once and full. The paired 4-byte stores write
    half-sectors (twice the output's L2 write requests, ncu run 6 of session 5) with 4 times the
    store instructions. A warp barrier orders the staging and the reads (and the reads before
    the next chunk's staging). The stores are evict-first in L2 (``st.global.cs``): D is not
    read again, and with the default policy its lines evicted operand tiles that other blocks
    were about to load (perf-notes s16).

    Generated per chunk (one basic block of numba IR each, see ``_unrolled_epilogue``); rows at
    or past ``M`` are staged like the others and not stored. ``beta * C`` calls keep the guarded
    stores: with its 16 predicated loads of C per chunk the kernel spilled 120 B (ptxas, cap
    168 registers at 384 threads).

    ``offload``: chunk ``ch`` is staged at ``buf + ch * 2 KB`` and left there: the producer
    warpgroup's storer warps read it back and store it (``build_kernel``), so the warp goes
    back to its wgmma as soon as its tile is in shared memory.

    ``defer``: the last ``defer`` chunks are staged at ``buf + i * 2 KB`` (``i`` from 0) and
    left there: the kernel stores them during the warp's next tile (``WgmmaConfig.defer``).
    """
    if out_kind not in _TO_BITS:
        raise ValueError(f"the staged epilogue is for 16-bit results, not {out_kind}")
    if NF % 8:
        raise ValueError(f"the staged epilogue works in 64-column chunks, NF = {NF}")
    extra_args = "".join(f", extra[{k}]" for k in range(n_extra))
    ns = {"I": I, "uint32": uint32, "float32": float32, "store_rows": store_rows}
    if epilogue is not None:
        ns["epi"] = epilogue if hasattr(epilogue, "py_func") else _dev(epilogue)
    args = "acc, wrow, n0, lane, M, alpha, d_base, ldd_r, buf, extra"
    for ch in range(NF // 8):
        src = [f"def chunk{ch}({args}):",
               "    c0 = n0 + 2 * (lane & 3)",  # this lane's first column in a fragment
               "    r0 = wrow + (lane >> 2)"]  # this lane's rows: r0 and r0 + 8
        for n in range(8 * ch, 8 * ch + 8):
            for h in range(2):
                bits = []
                for e in range(2):
                    x = f"{h}_{n}_{e}"
                    lines, val = element_source(x, f"acc[0, {n}, {2 * h + e}]", f"r0 + {8 * h}",
                                                f"c0 + {8 * n + e}", epilogue, extra_args)
                    src += lines
                    src.append(f"    h{x} = uint32({_TO_BITS[out_kind].format(v=val)})")
                    bits.append(f"h{x}")
                src.append(f"    w{h}_{n} = {bits[0]} | ({bits[1]} << 16)")
        # stmatrix.x4 number t: matrices (row half j & 1, fragment 2t + (j >> 1)); lanes
        # 8j .. 8j + 7 give the staged rows of matrix j. stmatrix is .aligned: the warp must
        # arrive converged (lane 0 of warp 0 has just released a stage on its own)
        kept = offload or ch >= NF // 8 - defer  # left staged for the storers or the next tile
        slot = ch if offload else ch - (NF // 8 - defer) if kept else 0
        src += [f"    sbase = buf + {slot * WARP_STAGING} + "
                "(8 * ((lane >> 3) & 1) + (lane & 7)) * 128",
                "    half = lane >> 4",
                "    I.warp_sync()"]
        for t in range(4):
            n = 8 * ch + 2 * t
            src.append(f"    I.stmatrix_x4(sbase + ((({2 * t} + half) ^ (lane & 7)) << 4), "
                       f"(w0_{n}, w1_{n}, w0_{n + 1}, w1_{n + 1}))")
        src.append("    I.warp_sync()")
        if not kept:
            src.append(f"    store_rows(buf, lane, d_base + wrow * ldd_r + (n0 + {64 * ch}) * 2, "
                       "M - wrow, ldd_r)")
        exec("\n".join(src) + "\n", ns)  # noqa: S102
        ns[f"chunk{ch}"] = _dev(ns[f"chunk{ch}"])
    body = [f"def store_staged({args}):"] + [f"    chunk{ch}({args})" for ch in range(NF // 8)]
    exec("\n".join(body) + "\n", ns)  # noqa: S102
    return _dev(ns["store_staged"])


SM90A = Arch(9, 0, "a")


def operand_layout(kmajor: bool, rows: int):
    """(LBO, SBO, bytes the descriptor advances per k-step) of one operand's stage tile.

    K-major: one 128-byte row per M/N index, 8-row atoms 1024 bytes apart; a k-step moves
    32 bytes along the row (the swizzle is applied to the address bits by the hardware).
    M/N-major: one 128-byte row per k in boxes of 64 M/N indices, boxes ``64 * 128`` bytes
    apart (LBO), 8-k-row atoms 1024 bytes apart (SBO); a k-step moves 16 rows.
    """
    if kmajor:
        return 16, 8 * ROW_BYTES, KSTEP * 2
    return BK * ROW_BYTES, 8 * ROW_BYTES, KSTEP * ROW_BYTES


def build_kernel(cfg: WgmmaConfig, kind: str, a_kmajor: bool, b_kmajor: bool, epilogue=None,
                 n_extra: int = 0, pair_store: bool = False):
    """The kernel for one (config, kind, operand majors, epilogue); see the module docstring.

    ``pair_store``: False, 16-bit results stored one by one; True, in 32-bit pairs (unit column
    stride, 4-byte aligned rows); 2, besides the pairs, tiles whose columns all lie inside the
    matrix are staged through shared memory and stored 16 bytes per lane when ``beta == 0``
    (``staged_epilogue``: 16-byte aligned D, rows and batches; ``cfg.staging_bytes()`` more shared
    memory)."""
    if kind not in SUPPORTED_KINDS:
        raise ValueError(f"the sm90a kernel takes {SUPPORTED_KINDS}, not {kind}")
    out_kind = OUT_KIND[kind]
    if pair_store and out_kind not in _TO_BITS:
        raise ValueError(f"paired stores are for 16-bit results, not {out_kind}")
    BM, BN, STAGES, GROUP_M = cfg.bm, cfg.bn, cfg.stages, cfg.group_m
    NC = cfg.consumers
    A_BYTES, STAGE = BM * ROW_BYTES, cfg.stage_bytes
    a_lbo, a_sbo, a_step = operand_layout(a_kmajor, BM)
    b_lbo, b_sbo, b_step = operand_layout(b_kmajor, BN)
    NF = BN // 8  # n8 fragments per warp: the sm_80 epilogue's layout of a 16 x BN strip
    MW = cfg.blocks_m  # 64-row blocks (accumulators) per consumer
    PP = cfg.pingpong
    DEPTH = cfg.depth
    CL = cfg.cluster > 1
    SK = cfg.streamk
    NCT = 128 * NC  # consumer threads
    NREGS = MW * BN // 2  # accumulator registers per consumer thread
    store_all = _unrolled_epilogue(1, NF, out_kind, epilogue, n_extra, bool(pair_store))
    STAGED = pair_store == 2  # 16-byte aligned rows: tiles inside N may take the staged stores
    if STAGED and not cfg.staged:
        raise ValueError(f"{cfg}: no staged epilogue (staged=False)")
    # The producer's warps 1-3 store the staged tiles (the consumers only stage them).
    OFFLOAD = STAGED and cfg.offload
    # Deferred stores (cfg.defer chunks of each staged tile stored during the next one): pend
    # counts the chunks of the consumers' last staged tile not yet stored (the older first),
    # p_at is the first of them in D at the tile's first row, p_rows the tile's rows inside M:
    # the same for every consumer thread (ptxas keeps pend in a uniform register); each warp
    # adds its own rows (wrow) when it stores a chunk.
    DEFER = cfg.defer if STAGED else 0
    flush = [f"store_rows(stage_at + ({DEFER} - pend) * {WARP_STAGING}, lane, p_at + wrow * ldd_r "
             f"* OSZ + ({DEFER} - pend) * 128, p_rows - wrow, ldd_r * OSZ)", "pend -= 1"]

    def pending(indent, head):
        """Source of ``head`` (an ``if`` or ``while`` on ``pend``) storing one deferred chunk,
        at ``indent``; nothing without deferred stores."""
        return "\n".join(" " * indent + x for x in [head] + ["    " + x for x in flush]) \
            if DEFER else ""
    NCH = BN // 64  # 64-column chunks of a staged row block
    SF, SE = 8 * (2 * STAGES + 1), 8 * (2 * STAGES + 2)  # staged full / empty barriers
    STORERS = 96
    PREGS = STORER_REGS if OFFLOAD else PRODUCER_REGS
    ns = {
        "cuda": cuda, "I": I, "np": np, "int32": int32, "int64": int64, "uint32": uint32,
        "uint64": uint64, "float32": float32, "smem_desc": D.smem_desc, "store_all": store_all,
        "wgmma": _WGMMA[kind], "zeros": I.wgmma.zero_accumulator(BN // 2),
        "fop": I.wgmma_fence_operand_f32, "ONE": float32(1.0),
    }
    if STAGED:
        ns["store_staged"] = staged_epilogue(NF, out_kind, epilogue, n_extra, OFFLOAD, DEFER)
        ns["store_rows"] = store_rows
    ta, tb = int(not a_kmajor), int(not b_kmajor)
    # A K-major: one box of BM rows; M-major: one box per 64 rows.
    if a_kmajor:
        load_a = ["tma(a_s, TM, (0, 0), k0, m0, za, full)"]
    else:
        load_a = [f"tma(a_s + {i * BOX * ROW_BYTES}, TM, (0, 0), m0 + {i * BOX}, k0, za, full)"
                  for i in range(BM // BOX)]
    if CL and b_kmajor:  # this block's half of the B rows, multicast to both blocks
        load_b = [f"tmc(b_s + rank * {BN // 2 * ROW_BYTES}, TM, (1, 0), k0, n0 + rank * {BN // 2}, "
                  "zb, full, BOTH)"]
    elif CL:  # this block's share of the 64-column boxes of B (j % 2 == rank)
        load_b = [f"if rank == {j % 2}: tmc(b_s + {j * BOX * ROW_BYTES}, TM, (1, 0), "
                  f"n0 + {j * BOX}, k0, zb, full, BOTH)" for j in range(BN // BOX)]
    elif b_kmajor:
        load_b = ["tma(b_s, TM, (1, 0), k0, n0, zb, full)"]
    else:
        load_b = [f"tma(b_s + {j * BOX * ROW_BYTES}, TM, (1, 0), n0 + {j * BOX}, k0, zb, full)"
                  for j in range(BN // BOX)]
    # The k-steps of a stage, unrolled (descriptors differ by a constant in the address field).
    # 64-row block w of A starts 64 rows (one 8 KB box) further in either major.
    ksteps = []
    for kk in range(BK // KSTEP):
        for w in range(MW):
            da, db = (kk * a_step + w * BOX * ROW_BYTES) >> 4, (kk * b_step) >> 4
            ksteps.append(f"acc{w} = wgmma(acc{w}, ad + uint64({da}), bd + uint64({db}), 1, "
                          f"{ta}, {tb})")
    epilogue_src = []
    for w in range(MW):
        epilogue_src += [f"frag{w} = cuda.local.array((1, {NF}, 4), float32)"]
        fill = [f"frag{w}[0, {r // 4}, {r % 4}] = acc{w}[{r}]" for r in range(BN // 2)]
        if SK:  # the owner of a split tile adds the other block's partial sums
            epilogue_src += ["if fix:"] + [
                f"    {x} + I.ld_global_f32(ws_at + {4 * (w * BN // 2 + r) * NCT})"
                for r, x in enumerate(fill)] + [
                "else:"] + ["    " + x for x in fill]
        else:
            epilogue_src += fill
        narrow = [
            f"store_all(frag{w}, m0 + row0 + {64 * w} + warp * 16 + (lane >> 2), "
            "n0 + 2 * (lane & 3), M, N, alpha, beta, c_at, d_at, ldc_r * OSZ, ldc_c * OSZ, "
            "ldd_r * OSZ, ldd_c * OSZ, extra)"]
        if STAGED:  # the tile's columns all inside the matrix (the last tile column may not be)
            buf = f"stage_at + {w * 4 * NCH * WARP_STAGING}" if OFFLOAD else "stage_at"
            # alpha applied here, on a uniform branch that alpha == 1 skips, and the staged
            # epilogue given a literal 1 (the multiplies fold away): it then runs 128 FMUL a
            # thread fewer, 38% of its instructions, which a launch's one-round tiles fetch
            # cold (`no_instruction` stalls: perf-notes s25). Not in the ping-pong tiles: with
            # a fused epilogue the 128x128x6 one spilled 8 B with it.
            scale = [f"        frag{w}[0, {r // 4}, {r % 4}] = alpha * frag{w}[0, {r // 4}, {r % 4}]"
                     for r in range(BN // 2)]
            narrow = [f"if n0 + {BN} <= N and beta == 0:",
                      *([] if PP else ["    if alpha != 1:", *scale]),
                      f"    store_staged(frag{w}, m0 + row0 + {64 * w} + warp * 16, n0, lane, M, "
                      f"{'alpha' if PP else 'ONE'}, d_at, ldd_r * OSZ, {buf}, extra)",
                      *([f"    pend = {DEFER}",  # (one 64-row block: cfg.defer needs MW == 1)
                         f"    p_at = d_at + m0 * ldd_r * OSZ + (n0 + {BN - 64 * DEFER}) * OSZ",
                         "    p_rows = M - m0"] if DEFER else []),
                      "else:"] + ["    " + x for x in narrow]
        epilogue_src += narrow
    epilogue_src = ["c_at = I.gmem_addr(C, 0) + b * sc * OSZ",
                    "d_at = I.gmem_addr(D, 0) + b * sd * OSZ"] + epilogue_src
    if OFFLOAD:  # the staging holds tile j - 1 until the storers have read it; then tile j's
        # staging (or guarded stores) and every consumer thread's arrival, staged or not, so
        # that both sides count the same phases
        epilogue_src = ["if j > 0:",
                        f"    while not I.mbarrier_try_wait_parity(bar0 + {SE}, uint32((j - 1) & 1)):",
                        "        pass"] + epilogue_src + [f"I.mbarrier_arrive(bar0 + {SF})"]
    if CL:  # the second tile of a pair may lie below the matrix: loaded (zeros), not stored
        epilogue_src = ["if m0 < M:"] + ["    " + x for x in epilogue_src]
    osz = _OUT_BYTES[out_kind]
    # Cluster variant: the scheduler walks tile pairs; every release goes to both blocks.
    if CL:
        sched = dict(start="cuda.blockIdx.x // 2", step="cuda.gridDim.x // 2", tm="pairs_m",
                     group=max(1, GROUP_M // 2), row="((first_m + within) * 2 + rank)")
        sync = ["I.barrier_cluster_arrive()", "I.barrier_cluster_wait()"]
        init_fence = ["        I.fence_mbarrier_init()  # the peer's multicasts and arrivals come next"]
        rank_src = ["rank = I.cluster_ctarank()", "peer = rank ^ 1",
                    "pairs_m = (tiles_m + 1) // 2  # tile rows in pairs (the last may be half out)"]
    else:
        sched = dict(start="cuda.blockIdx.x", step="cuda.gridDim.x", tm="tiles_m", group=GROUP_M,
                     row="(first_m + within)")
        sync, init_fence, rank_src = ["cuda.syncthreads()"], [], []

    def coords(indent):
        """Source of a tile's coordinates (batch b, first row m0, first column n0) from its
        index ``tile``: the producer, the consumers and the storers walk the same tiles.

        In 32-bit unsigned arithmetic (a tile count reaches 2^32 only with far more memory
        than any GPU has; the host checks it): ptxas emits one ``div.u32`` sequence a quotient
        where the 64-bit signed floor divisions were a call with a 32-bit bypass, their
        remainders a second call. The producer works out its first tile's coordinates before
        its first TMA load, on every launch's critical path (perf-notes s26)."""
        lines = ["tu = uint32(tile)", "b32 = uint32(tu // per_batch)",
                 "r = uint32(tu - b32 * per_batch)", "g = uint32(r // per_group)",
                 "rg = uint32(r - g * per_group)", f"first_m = int64(g) * {sched['group']}",
                 f"rows = min({sched['tm']} - first_m, {sched['group']})",
                 "q = uint32(rg // uint32(rows))", "within = int64(rg - q * uint32(rows))",
                 "b = int64(b32)", f"m0 = {sched['row']} * {BM}", f"n0 = int64(q) * {BN}"]
        return "\n".join(" " * indent + x for x in lines)

    def tile_walk(indent):
        """Source of the loop over the block's tiles, ``start``, ``start + step``, ... below
        ``ntiles``, with the step at the loop's top (a ``continue`` skips the rest): a ``range``
        with a run-time step costs a 64-bit division for its trip count before the first tile."""
        lines = [f"t_step = int64({sched['step']})", f"tile = int64({sched['start']}) - t_step",
                 "while tile < ntiles - t_step:", "    tile += t_step"]
        return "\n".join(" " * indent + x for x in lines)

    # the storers (producer warps 1-3): per tile of the block, wait for the consumers' staging,
    # store it (16-byte words of whole 128-byte rows; slot s holds the 16 rows of row block
    # s // NCH, columns 64 (s % NCH) ..., its 16-byte words XOR-swizzled by the row as
    # staged_epilogue writes them), then free it
    storer_src = "" if not OFFLOAD else f'''
        elif t >= {128 - STORERS}:
            st = t - {128 - STORERS}
            staging = ring + {STAGES * STAGE}
            j = -1
{tile_walk(12)}
                j += 1
                while not I.mbarrier_try_wait_parity(bar0 + {SF}, uint32(j & 1)):
                    pass
{coords(16)}
                if n0 + {BN} <= N and beta == 0:
                    ldb = ldd_r * OSZ
                    d_tile = I.gmem_addr(D, 0) + b * sd * OSZ + m0 * ldb + n0 * OSZ
                    rows_in = int32(min(M - m0, {BM}))
                    for q in range(int32(st), int32({BM * BN // 8}), int32({STORERS})):
                        slot = q >> 7
                        rr = (q >> 3) & 15
                        c = q & 7
                        rb = slot // {NCH}
                        row = 16 * rb + rr  # in the tile
                        v = I.ld_shared_v4(staging + (slot << 11) + (rr << 7) + ((c ^ (rr & 7)) << 4))
                        I.st_global_cs_v4_if(d_tile + int64(row) * ldb + int64(64 * (slot - rb * {NCH}) + 8 * c) * OSZ,
                                             (v[0], v[1], v[2], v[3]), uint32(row < rows_in))
                I.mbarrier_arrive(bar0 + {SE})'''
    staged_bars = "" if not OFFLOAD else (
        f"\n        I.mbarrier_init(bar0 + {SF}, {128 * NC})  # staged full: every consumer thread\n"
        f"        I.mbarrier_init(bar0 + {SE}, {STORERS})  # staged empty: every storer thread")
    stage_slot = (f"(cw * {4 * MW} + warp) * {NCH * WARP_STAGING}" if OFFLOAD
                  else f"(ct // 32 + 4 * cw) * {max(1, DEFER) * WARP_STAGING}")

    # Split tail (SK): the tiles of a last, partial wave of at most half the blocks are each
    # split into two K halves, run side by side by two blocks. Every block first runs its
    # whole tiles (the default's order, so all blocks stay at the same k as before), then, if
    # its index is below twice the tail, its half of tail tile ``blk // 2``: an even block the
    # second half (it leaves its partial sums in the workspace), the odd block above it the
    # first half (it waits for them, adds them and stores the tile). Both halves start
    # together, so the wait is short. (Session 16's contiguous k-ranges over a wave and a half
    # kept no two blocks at the same k and read the operands about twice: perf-notes s12.)
    # numba's simulator runs blocks in order, so the block that waits is numbered above the
    # block it waits for. Tail tile i (tile whole * blocks + i) has slot i of the workspace and
    # flags i * warps ... of the flags.
    if SK:
        # Every thread works its block's share out from the grid size, its block index and the
        # kernel's ktiles and ntiles, in 32-bit arithmetic (see coords; the 64-bit form had
        # four calls to division routines in the prologues): nothing to keep in shared memory
        # or in registers across the units
        unit_loop = ["sk_n = uint32(cuda.gridDim.x)",
                     "blk = uint32(cuda.blockIdx.x)",
                     "tail = uint32(uint32(ntiles) % sk_n)  # split_tail(tiles, blocks, ktiles), as the host",
                     "if 2 * tail > sk_n or ktiles < 2:",
                     "    tail = uint32(0)",
                     "whole = uint32(uint32(uint32(ntiles) + sk_n - 1 - tail - blk) // sk_n)  # (modulo 2^32)",
                     "units = whole + (1 if blk < 2 * tail else 0)",
                     "for u in range(units):",
                     "    tile = int64(blk + u * sk_n)",
                     "    kb = int64(0)",
                     "    ke = ktiles",
                     "    if u == whole:  # its K half of a tail tile (whole * blocks = tiles - tail):",
                     "        tile = int64(whole * sk_n + blk // 2)",
                     "        if blk % 2 == 1:  # the first half: it finishes the tile",
                     "            ke = ktiles // 2",
                     "        else:",
                     "            kb = ktiles // 2"]
        krange, kfirst = "range(kb, ke)", "kt - kb"
    else:
        unit_loop = tile_walk(0).splitlines()
        krange, kfirst = "range(ktiles)", "kt"

    def units(indent):
        return "\n".join(" " * indent + x for x in unit_loop)

    if SK:
        # a split tile's later k-tiles: partial sums to this block's slot of the workspace
        # (register r of consumer thread c at r * NCT + c: coalesced), then the warp's flag
        part = [f"I.st_global_f32(ws_at + {4 * (w * BN // 2 + r) * NCT}, acc{w}[{r}])"
                for w in range(MW) for r in range(BN // 2)]
        epilogue_src = [
            "slot = int64(tile - int64(whole) * sk_n)  # (a split tile's; unused otherwise)",
            # one address a thread, each access an immediate offset from it: indexing ws took ~9
            # instructions an element (the wraparound of a signed index), 1170 a thread for
            # the stores, fetched cold: ~5 us a hand-off (perf-notes s29)
            f"ws_at = I.gmem_addr(ws, 0) + uint64(slot * {NREGS * NCT} + (t - 128)) * uint64(4)",
            f"fl = slot * {NCT // 32} + (t - 128) // 32",
            "f_at = I.gmem_addr(flags, 0) + uint64(fl * 8)",
            "if kb > 0:  # a later part of a split tile: its partial sums for the owner",
            *["    " + x for x in part],
            "    # the warp's stores ordered before lane 0's release of the flag (acquire-release",
            "    # at GPU scope: cuda.threadfence() is fence.sc.gpu, MEMBAR.SC.GPU, dearer under",
            "    # the kernel's load: perf-notes s29)",
            "    I.fence_acq_rel_gpu()",
            "    I.warp_sync()",
            "    if lane == 0:",
            "        I.st_release_gpu_s64(f_at, nonce)",
            "else:",
            "    fix = ke < ktiles  # the first part of a split tile: wait for the rest",
            "    if fix:  # (the warp polls its flag through lane 0 and leaves on a vote: a",
            "        # loop inside ``if lane == 0`` is divergent, and everything carried across",
            "        # it, the k-loop's descriptors included, left the uniform datapath and",
            "        # spilled: perf-notes s14)",
            "        got = int64(0)",
            "        while I.vote_any(uint32(got == nonce)) == 0:",
            "            if lane == 0:",
            "                got = I.ld_acquire_gpu_s64(f_at)",
            "        I.warp_sync()",
            "        I.fence_acq_rel_gpu()",
            *["    " + x for x in epilogue_src]]

    pending_init = ["pend = 0", "p_at = I.gmem_addr(D, 0) + int64(0)", "p_rows = int64(0)"]
    pending_init = "\n".join(" " * 8 + x for x in pending_init) if DEFER else ""

    def release(indent, addr):
        lines = [f"I.mbarrier_arrive({addr})"]
        if CL:
            lines = [f"e = {addr}", "I.mbarrier_arrive(e)",
                     "I.mbarrier_arrive_cluster(I.mapa_shared_cluster(e, peer))"]
        return "\n".join(" " * indent + x for x in lines)
    src = f'''
def kernel(TM, C, D, M, N, K, ldc_r, ldc_c, ldd_r, ldd_c, sc, sd, alpha, beta,
           tiles_m, tiles_n, batch, a_batched, b_batched, {"ws, flags, nonce, " if SK else ""}extra):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array({2 * STAGES + (3 if OFFLOAD else 1)}, np.uint64)
    t = cuda.threadIdx.x
    wg = t // 128
    pad = (1024 - I.smem_addr(sh, 0) % 1024) % 1024
    ring = I.smem_addr(sh, 0) + pad
    bar0 = I.smem_addr(bars, 0)
    if t == 0:
        I.prefetch_tensormap(TM, (0, 0))  # the maps are kernel parameters (nbk_by_value):
        I.prefetch_tensormap(TM, (1, 0))  # no host write to acquire, only fetch them early
        for s in range({STAGES}):
            I.mbarrier_init(bar0 + 8 * s, 1)  # full[s]: the producer's arrival + TMA bytes
            I.mbarrier_init(bar0 + {8 * STAGES} + 8 * s, {(1 if PP else NC) * cfg.cluster})  # empty[s]: its consumers
        I.mbarrier_init(bar0 + {16 * STAGES}, 1)  # order: ping-pong main loops take turns{staged_bars}
        I.fence_proxy_async()
{chr(10).join(init_fence + ["    " + x for x in sync + rank_src])}
    ktiles = (K + {BK - 1}) // {BK}
    per_batch = uint32({sched["tm"]} * tiles_n)  # (32-bit: see coords)
    ntiles = int64(per_batch) * batch
    per_group = uint32({sched["group"]} * tiles_n)
    if wg == 0:
        I.setmaxnreg_dec({PREGS})
        if t == 0:
            it = 0
{units(12)}
{coords(16)}
                za = b * a_batched
                zb = b * b_batched
                for kt in {krange}:
                    # (one thread: its division by STAGES is cheap beside the consumers', which
                    # count instead; two more live counters spilled within the producer's 40
                    # registers in the multicast builds)
                    s = it % {STAGES}
                    if it >= {STAGES}:
                        ph = uint32(((it // {STAGES}) - 1) & 1)
                        while not I.mbarrier_try_wait_parity(bar0 + {8 * STAGES} + 8 * s, ph):
                            pass
                    full = bar0 + 8 * s
                    I.mbarrier_arrive_expect_tx(full, {STAGE})
                    a_s = ring + s * {STAGE}
                    b_s = a_s + {A_BYTES}
                    k0 = kt * {BK}
{chr(10).join(" " * 20 + x for x in load_a + load_b)}
                    it += 1{storer_src}
    else:
        I.setmaxnreg_inc({consumer_regs(NC, PREGS)})
        cw = wg - 1
        ct = t - 128 * wg
        warp = ct // 32
        lane = ct % 32
        stage_at = ring + {STAGES * STAGE} + {stage_slot}  # staged epilogue
        # The consumer index as lane 0's, one value a warp to ptxas (cw itself, from threadIdx,
        # is per thread to it). The k-loop's descriptors and counters derive from it, from the
        # first tile row of this consumer's 64-row blocks or, ping-pong, from the branch on whose
        # turn a tile is: from cw the descriptors left the uniform datapath, 6 R2UR a k-tile in
        # the cooperative tiles (3-5%, perf-notes s21), 32 in the ping-pong ones (s24).
        cwu = int64(I.broadcast_lane0_u32(uint32(cw)))
        row0 = {0 if PP else f"cwu * {cfg.wg_rows}"}
{"        wrow = row0 + warp * 16  # the warp's first tile row (deferred stores)" if DEFER else ""}
        ad0 = smem_desc(ring + row0 * {ROW_BYTES}, {a_lbo}, {a_sbo}, 1, 0)
        bd0 = smem_desc(ring + {A_BYTES}, {b_lbo}, {b_sbo}, 1, 0)
        j = -1
{pending_init}
{units(8)}
            j += 1  # the block's j-th tile: its k-tiles are the ring's j*ktiles ... on
            if {int(PP)} and j % 2 != cwu:
                continue  # ping-pong: the other consumer's tile
            # (with a split tail too: only a block's last unit may be a K half)
            it = j * ktiles
            if {int(PP)} and j > 0:
                # Wait until the other consumer has waited for all of tile j-1's stages: the
                # stages of tile j are then at most one phase ahead, which parity waits need.
                while not I.mbarrier_try_wait_parity(bar0 + {16 * STAGES}, uint32((j - 1) & 1)):
                    pass
{coords(12)}
{pending(12, f"while pend > {'ke - kb' if SK else 'ktiles'}:  # more chunks than k-tiles: the excess before the k-loop, the rest in it")}
{chr(10).join(f"            acc{w} = fop(zeros())" for w in range(MW))}
            s = it % {STAGES}  # once a tile, then counted: dividing by 3, 5 or 6 in int64 each
            # k-tile cost the issuing warpgroup ~20 instructions (perf-notes s11)
            r1 = uint32((it // {STAGES}) & 1)
            for kt in {krange}:
                while not I.mbarrier_try_wait_parity(bar0 + 8 * s, r1):
                    pass
                ad = ad0 + uint64(s * {STAGE // 16})
                bd = bd0 + uint64(s * {STAGE // 16})
                I.wgmma_fence()
{chr(10).join(" " * 16 + x for x in ksteps)}
                I.wgmma_commit_group()
{pending(16, "if pend > 0:  # one deferred chunk, while the wgmma run")}
                I.wgmma_wait_group({DEPTH})
{chr(10).join(f"                acc{w} = fop(acc{w})" for w in range(MW))}
                if {kfirst} >= {DEPTH} and ct == 0:  # k-tile kt - DEPTH's wgmma are done: free its stage
                    q = s - {DEPTH}
                    if q < 0:
                        q += {STAGES}
{release(20, f"bar0 + {8 * STAGES} + 8 * q")}
                it += 1
                s += 1
                if s == {STAGES}:
                    s = int64(0)
                    r1 ^= uint32(1)
            if {int(PP)} and ct == 0:
                I.mbarrier_arrive(bar0 + {16 * STAGES})  # tile j's main loop is issued: turn
            I.wgmma_wait_group(0)
{chr(10).join(f"            acc{w} = fop(acc{w})" for w in range(MW))}
            if ct == 0:  # the stages of the last min(DEPTH, ktiles) k-tiles
                for d in range({DEPTH}):
                    if d < {"ke - kb" if SK else "ktiles"}:
{release(24, f"bar0 + {8 * STAGES} + 8 * ((it - 1 - d) % {STAGES})")}
{chr(10).join([" " * 12 + x for x in epilogue_src] + ["    " + x for x in sync if CL])}
{pending(8, "while pend > 0:  # the block's last tile")}
'''
    ns["tma"] = I.tma_load_3d
    ns["tmc"] = I.tma_load_3d_multicast
    ns["BOTH"] = np.uint16(0b11)  # ctaMask: both blocks of the cluster
    ns["OSZ"] = osz
    exec(compile(src, f"<wgmma_kernel {cfg.key} {kind} {a_kmajor} {b_kmajor}>", "exec"), ns)  # noqa: S102
    ns["kernel"].nbk_by_value = BY_VALUE  # read where the PTX is made (launch.entry_ptx)
    kernel = cuda.jit(ns["kernel"])
    kernel.nbk_by_value = BY_VALUE  # and where the launch is packed (runner.launch_jit)
    kernel.nbk_smem_bytes = cfg.smem_bytes() + (cfg.staging_bytes() if STAGED else 0)
    kernel.nbk_launch_bounds = (cfg.threads, 1)  # a register cap at entry: setmaxnreg needs it
    kernel.nbk_threads = cfg.threads
    # registers the block must own for its setmaxnreg requests (runner checks the cubin)
    kernel.nbk_reg_pool = 128 * PREGS + 128 * NC * consumer_regs(NC, PREGS)
    kernel.nbk_source = src
    if CL:
        kernel.nbk_cluster = cfg.cluster_dims  # the launch must carry it (runner.launch_jit)
    return kernel


#: The kernel's argument 0, the tensor maps of A and B (``uint8[2, 128]``), passed by value.
BY_VALUE = {0: 256}
_PAIR = ctypes.c_ubyte * 256


# --- host side: tensor maps and the launch ---------------------------------------------------
def _round16(x: int) -> int:
    return max(16, -(-int(x) // 16) * 16)


def operand_geometry(view, operand: str, kmajor: bool, cfg: WgmmaConfig):
    """(shape, byte strides, box) of the 3-D tensor map of an operand (NumPy order: batch,
    then the strided axis, then the contiguous one), or a string saying why TMA cannot take
    it. ``view`` is an ArrayView of a (M x K) or b (K x N), 2-D or batched."""
    esz = view.dtype.itemsize
    if view.ndim == 3:
        nb, sb = view.shape[0], (view.strides[0] if view.shape[0] > 1 else 0)
    else:
        nb, sb = 1, 0
    (r, c), (sr, sc) = view.shape[-2:], view.strides[-2:]
    # The contiguous axis: K for K-major operands; M of a or N of b otherwise.
    inner_is_cols = (operand == "a") == kmajor
    inner, mid, mid_stride = (c, r, sr) if inner_is_cols else (r, c, sc)
    mid_bytes = mid_stride * esz if mid > 1 else _round16(inner * esz)
    if mid > 1 and (mid_stride <= 0 or mid_bytes % 16):
        return (f"{operand}'s leading dimension ({mid_stride} elements) is not a multiple of "
                "16 bytes, which TMA needs")
    batch_bytes = sb * esz if nb > 1 else _round16(mid * mid_bytes)
    if nb > 1 and (sb <= 0 or batch_bytes % 16):
        return f"{operand}'s batch stride ({sb} elements) is not a multiple of 16 bytes"
    # K-major B in a cluster: each block loads (and multicasts) half of the tile's rows
    rows_box = {("a", True): cfg.bm, ("b", True): cfg.bn // cfg.cluster}.get((operand, kmajor), BOX)
    return (nb, mid, inner), (batch_bytes, mid_bytes, esz), (1, rows_box, BOX)


def tma_blocker(va, vb, a_kmajor, b_kmajor, cfg, k):
    """Why the sm90a kernel cannot take these operands as they are, or None (an operand
    given as None is copied into an aligned K-major buffer first)."""
    if k == 0:
        return "K = 0 (nothing to load): the sm80-class variant writes beta * C"
    for v, name, km in ((va, "a", a_kmajor), (vb, "b", b_kmajor)):
        if v is None:  # copied before the launch: the copy is aligned and padded
            continue
        ptr = _host_ptr(v) if v.host else v.ptr
        if ptr % 16:
            return f"{name} is not 16-byte aligned ({ptr % 16} bytes off), which TMA needs"
        g = operand_geometry(v, name, km, cfg)
        if isinstance(g, str):
            return g
    return None


def _host_ptr(v):
    return v.obj.__array_interface__["data"][0]


def tensor_maps(va, vb, a_kmajor, b_kmajor, cfg):
    """The two encoded maps (A, B) of a call, as TensorMap objects."""
    from .. import tensormap

    maps = []
    for v, name, km in ((va, "a", a_kmajor), (vb, "b", b_kmajor)):
        shape, strides, box = operand_geometry(v, name, km, cfg)
        ptr = _host_ptr(v) if v.host else v.ptr
        maps.append(tensormap.encode_tiled(ptr, v.dtype, shape, strides, box, swizzle=128,
                                           array=v.obj if v.host else None))
    return maps


@functools.lru_cache(maxsize=64)
def _encoder(geometry):
    """tensormap.encoder for one operand's (dtype, shape, strides, box), made once."""
    from .. import tensormap

    return tensormap.encoder(*geometry, swizzle=128)


class MapCache:
    """The tensor maps of one call geometry, by operand addresses, as the bytes a launch
    passes (the kernel takes them by value: ``BY_VALUE``).

    A map holds the operand's address, so a call on other arrays needs other maps; encoding
    one costs microseconds, so repeat calls on the same arrays reuse them, and a call on a
    new activation with the same weight encodes one map, not two. Not thread-safe: a repeat
    call's launcher uses it under its own lock, and copies the bytes into its argument block
    before anything else may touch the cache."""

    #: encoded maps kept per operand, and pairs of them, by address
    REMEMBERED = 256

    def __init__(self, geometry):
        # geometry: ((dtype, shape, strides, box) of a, same of b); per operand its encoder
        # and the maps it made, by address
        self._encoders = [_encoder(g) for g in geometry]
        self._made = ({}, {})
        self._pairs = {}  # (pa, pb) -> (256-byte ctypes buffer, its address)

    def _bytes(self, which: int, ptr: int) -> bytes:
        made = self._made[which]
        m = made.get(ptr)
        if m is None:
            if len(made) >= self.REMEMBERED:
                made.clear()
            m = made[ptr] = self._encoders[which](ptr).tobytes()
        return m

    def host_ptr(self, pa: int, pb: int) -> int:
        """The host address of the 256 bytes of the maps of a at ``pa`` and b at ``pb``
        (valid until the next call on this cache). A miss costs an encode of the operand that
        moved and a 256-byte buffer, no NumPy (perf-notes h6: 7.3 us with np.stack on the
        H200's host)."""
        pair = self._pairs.get((pa, pb))
        if pair is None:
            if len(self._pairs) >= self.REMEMBERED:
                self._pairs.clear()
            buf = _PAIR.from_buffer_copy(self._bytes(0, pa) + self._bytes(1, pb))
            pair = self._pairs[(pa, pb)] = (buf, ctypes.addressof(buf))  # buf keeps it valid
        return pair[1]
