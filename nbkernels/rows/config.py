"""How a row kernel is laid out on the GPU: the variant, threads per row, rows per block.

Kernels are compiled once per (operation, dtypes, arch); the layout
below is chosen per call from the row length and count and passed as launch arguments, so
no row length ever triggers a compile.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import NbkernelsError
from .device import MAX_PER_THREAD, MAX_THREADS, MAX_WARPS, PER_THREAD

VARIANTS = ("warp", "block", "split", "regs", "lanes")
BUFFERS = (1, 2, 4)  # ring depths of the row loop (a power of two: the slot is a mask)
#: the deepest ring plan_loop picks by itself: on the H200 (session 5, run 2; perf-notes r7) a
#: ring of 4 was 0-8 points of copy below 2 for every op and dtype, and never above by more
#: than noise; 4 stays for NBKERNELS_ROWS_LOOP=4 and RowConfig(buffers=4)
AUTO_BUFFERS = 2
#: Static shared memory a row kernel declares at most (layer_norm's and softmax's (4, MAX_WARPS)
#: float32 reduction scratch): counted against the per-block limit with the dynamic staging
#: before a kernel's real size is read from the driver after its first launch.
STATIC_SMEM = 4 * MAX_WARPS * 4
WARP_ROWS_PER_BLOCK = 4  # 128-thread blocks of one row per warp
LANES = (8, 16, 32)  # lanes per row of the lanes layout
LANES_BLOCK = 128  # threads a block of the lanes layout
#: The longest rows (planned) softmax, rms_norm and layer_norm take in the lanes layout by
#: themselves: what 32 lanes of 32 elements hold (perf-notes r63, r65)
LANES_ROWS = 1024
#: slot groups (16 bytes) a lane of the lanes layout holds at most where fewer lanes a row
#: than 32 are enough, and the row's groups from which it takes 32 lanes whatever fewer would
#: hold (perf-notes r63, run C on the H200: float32 rows of 197-200 on 16 lanes of 4 groups at
#: 93-95% of copy against 90-94 on 8 of 7; 16-bit rows of 500 and float32 of 256, 64 groups,
#: on 32 lanes of 2 at 79.5 and 93.5 against 73.9 and 91.8 on 16 of 4)
LANES_GROUPS = 4
LANES_WIDE = 64
SPLIT_THREADS = 256  # a chunk of a long row: 256 threads x 32 values = 8192 elements


@dataclass(frozen=True)
class RowConfig:
    """``variant`` "warp": one warp per row, ``rows_per_block`` rows a block; "block": one
    block of ``threads`` per row; "split": ``chunks`` blocks of ``threads`` per row, a
    partial-statistics pass and a finishing pass (rows longer than a block holds); "regs":
    one block of ``threads`` per row that loads its row straight into registers, no staging
    in shared memory and no loop (16-bit layer_norm, softmax and rms_norm without a residual
    on sm_80+; perf-notes r43); "lanes": ``threads`` (8, 16 or 32) lanes per row and
    ``rows_per_block`` rows a block, several rows a warp, each loaded straight into registers
    (softmax's short rows; perf-notes r63): there ``per_thread`` is the build's, a user's
    config included (a lane's elements; 32 by default).

    Warp and block layouts loop: each block walks rows ``r, r + step, ...``. ``blocks``: how
    many blocks are launched (0: as many as stay resident on the GPU, :func:`plan_loop`;
    never more than the rows need); ``buffers``: the ring of staging buffers per row group,
    1, 2 or 4 (the next ``buffers - 1`` rows' copies are in flight while this one is reduced
    and written; 0: chosen by :func:`plan_loop`). swiglu loops over the split layout's chunks
    too."""

    variant: str
    threads: int
    rows_per_block: int = 1
    chunks: int = 1
    blocks: int = 0
    buffers: int = 0
    #: elements a thread stages per row group: a property of the kernel (its
    #: ``nbk_per_thread``), which the host writes in; a user's config leaves it at the default
    per_thread: int = PER_THREAD

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise NbkernelsError(f"RowConfig.variant: expected one of {VARIANTS}, got "
                                 f"{self.variant!r}")
        if self.blocks < 0 or self.buffers not in (0,) + BUFFERS:
            raise NbkernelsError(f"RowConfig: blocks must be >= 0 (0: as many as stay "
                                 f"resident) and buffers 0, 1, 2 or 4, got blocks={self.blocks}, "
                                 f"buffers={self.buffers}")
        if self.variant == "lanes":
            if self.threads not in LANES or (self.threads * self.rows_per_block) % 32 or \
                    not 32 <= self.threads * self.rows_per_block <= MAX_THREADS:
                raise NbkernelsError(
                    f"RowConfig: the lanes variant takes {LANES} threads per row and a block "
                    f"(threads x rows_per_block) of whole warps, at most {MAX_THREADS} "
                    f"threads, got threads={self.threads}, rows_per_block="
                    f"{self.rows_per_block}")
        elif self.threads % 32 or not 32 <= self.threads * self.rows_per_block <= MAX_THREADS:
            raise NbkernelsError(
                f"RowConfig: threads ({self.threads}) must be a multiple of 32 and a block "
                f"(threads x rows_per_block = {self.threads * self.rows_per_block}) at most "
                f"{MAX_THREADS}")
        if self.per_thread % 4 or not 4 <= self.per_thread <= MAX_PER_THREAD:
            raise NbkernelsError(f"RowConfig.per_thread: expected a multiple of 4 from 4 to "
                                 f"{MAX_PER_THREAD}, got {self.per_thread}")
        if self.variant == "warp" and self.threads != 32:
            raise NbkernelsError(f"RowConfig: the warp variant has 32 threads per row, got "
                                 f"{self.threads}")
        if self.variant not in ("warp", "lanes") and self.rows_per_block != 1:
            raise NbkernelsError("RowConfig: only the warp and lanes variants put several rows "
                                 "in a block")

    @property
    def capacity(self) -> int:
        """Elements one group holds (a whole row, or one chunk of a split row)."""
        return self.threads * self.per_thread

    def grid(self, rows: int) -> int:
        """Blocks for one row group (or chunk) each: the most a launch uses."""
        if self.variant == "split":
            return rows * self.chunks
        return -(-rows // self.rows_per_block)

    def describe(self) -> str:
        if self.variant == "warp":
            return f"warp per row, {self.rows_per_block} rows per block"
        if self.variant == "block":
            return f"block of {self.threads} threads per row"
        if self.variant == "regs":
            return f"block of {self.threads} threads per row, the row held in registers"
        if self.variant == "lanes":
            return (f"{self.threads} lanes per row, {self.rows_per_block} rows per block, the "
                    f"rows held in registers")
        return f"{self.chunks} blocks of {self.threads} threads per row, two passes"


@dataclass(frozen=True)
class ArchRows:
    """What differs between GPU generations for the row kernels."""

    sm80: bool  # cp.async and cvt.rn.bf16(x2).f32 (sm_80+); Turing stages rows through
                # registers and rounds bf16 in integer code


#: Keyed on compute-capability major; every supported GPU generation has an entry.
SM_BASE = {7: ArchRows(sm80=False), 8: ArchRows(sm80=True), 9: ArchRows(sm80=True),
           10: ArchRows(sm80=True), 12: ArchRows(sm80=True)}


def for_arch(arch) -> ArchRows:
    if arch is None:  # the simulator: the sm_80 code path
        return SM_BASE[8]
    try:
        return SM_BASE[arch.major]
    except KeyError:
        raise NbkernelsError(f"row kernels: no configuration for {arch} (supported majors "
                             f"{sorted(SM_BASE)})") from None


def whole_warps(n: int, per_thread: int) -> int:
    """The fewest threads, in whole warps, whose ``per_thread`` elements each cover ``n``: a
    block no larger than the row needs (perf-notes r47: rows of 5120 on the 256 threads of the
    next power of two left 96 of them idle, staging and registers held for nothing)."""
    return -(-n // (32 * per_thread)) * 32


def by_block_size(table: dict, threads: int):
    """A kernel's per-block-size entry (``nbk_loop_by_threads``, ``nbk_pairs_by_threads``) for
    a block of ``threads``: the entry of the power of two it rounds up to. The sizes were
    measured as powers of two, each standing for the rows it held (256 threads of 32 elements:
    rows of 4097-8192); a block of the fewest whole warps (:func:`whole_warps`, 160 threads
    for rows of 5120) takes its row range's entry. None where that size has none."""
    p = 32
    while p < threads:
        p *= 2
    return table.get(p)


def choose(n: int, rows: int, sm_count: int, max_threads: int = MAX_THREADS,
           per_thread: int = PER_THREAD) -> RowConfig:
    """The layout for ``rows`` rows of ``n`` elements on a GPU with ``sm_count`` SMs, where
    shared memory lets a block stage at most ``max_threads`` threads' elements and a thread
    holds ``per_thread`` of a row (the kernel's ``nbk_per_thread``). A row longer than a warp
    holds takes a block of the fewest whole warps that cover it (64 threads at least), or, where
    shared memory or the SMs' count rule that out, a split layout."""
    P = per_thread
    if n <= 32 * P:
        return RowConfig("warp", 32, WARP_ROWS_PER_BLOCK, per_thread=P)
    few_rows = rows * 2 < sm_count  # one block per row would leave most SMs idle
    if n <= max_threads * P and not (few_rows and n > SPLIT_THREADS * P):
        return RowConfig("block", max(64, whole_warps(n, P)), per_thread=P)
    return RowConfig("split", SPLIT_THREADS, 1, -(-n // (SPLIT_THREADS * P)), per_thread=P)


def mixed_warps(n: int, threads: int, per_thread: int, slot: int) -> bool:
    """Whether rows of ``n`` on ``threads`` threads of ``per_thread`` elements leave a warp
    whose threads run both paths: some full (every slot group below ``n``), some not
    (``thread_full`` in :func:`device.make_io`; the first ``k`` threads are full)."""
    k = n // slot - (per_thread // slot - 1) * threads
    return 0 < k < threads and k % 32 != 0


def narrow_per_thread(n: int, per_thread: int, slot: int) -> int:
    """Elements a thread holds for rows of ``n`` where the op's build holds ``per_thread`` and
    a slot group ``slot`` (16 bytes: 8 16-bit elements, 4 float32): on the rows that
    :func:`choose` puts on one warp (at most 32 x ``per_thread``) or on its smallest block of
    64 threads (at most 64 x ``per_thread``), the fewest whole slot groups a thread that
    cover the row on those threads and leave no warp running both the full and the masked
    path (:func:`mixed_warps`), at most ``per_thread``; longer rows keep it. A row of 768 on a
    warp takes 24 (every lane full, none masked), where the 16-bit layer_norm build's 64 left
    every lane 24 of 64 slots and the masked path (perf-notes r54); 1536 on 64 threads takes
    24 rather than 32 (r55); float32 rows of 1100 take 24, every thread masked over 6 groups,
    not 20, where the first warp's threads split 19 full / 13 masked (r56). Rows of any
    length take one of at most ``per_thread / slot`` builds (a build per slot count, never per
    row length), and :func:`choose` keeps the layout it picks at ``per_thread``."""
    for threads in (32, 64):
        if n <= threads * per_thread:
            least = slot * max(1, -(-n // (threads * slot)))
            return next((p for p in range(least, per_thread, slot)
                         if not mixed_warps(n, threads, p, slot)), per_thread)
    return per_thread


#: Row lengths the register-row layout takes by itself, where the GPU's DRAM is wide
#: (:func:`wide_dram`). On the H200 (perf-notes r43-r46, r50-r51; against the staged layouts
#: in alternated processes) it moved, in 16 bits, +0.6 to +1.8 points of copy for layer_norm and
#: softmax at 8192 x 8192 on 128 threads of 64 elements and 1.4-2.2 more on 256 of 32, +10 to
#: +42 at rows of 5120 and 7168 for all three ops (to 92-96.6%), and at rows of 4096 on 128
#: threads of 32 +2.6 to +2.8 for layer_norm and +1.2 to +1.3 for softmax (session 49, run C).
#: rms_norm keeps its staged layouts at rows of 4096 and under (-0.15 to -0.36 in registers)
#: and at exactly 8192 (its 64-element build's block per row: the register rows measured 0.2-2.7
#: points below it, r45 and run C): rms_norm_kernel's ``REGS_RMS_ROWS``. Narrower DRAM (the
#: H100) is unmeasured: it keeps the staged layouts.
REGS_ROWS = (2049, 8192)
REGS_PER_THREAD = 64


def regs_config(n: int, choices=(PER_THREAD, REGS_PER_THREAD)) -> RowConfig:
    """The register-row layout for rows of ``n``, elements a thread from ``choices`` (the
    builds an op has, preferred first: the ops pass 32 before 64): the fewest whole warps
    covering the row (:func:`whole_warps`) at the choice that leaves the fewest element slots
    past the row's end, the first choice on a tie. A row that fills whole warps exactly takes
    that (rows of 5120 on 160 threads of 32): no thread holds a partial group and none runs
    the masked code (perf-notes r45: rows of 5120 on 128 threads of 64, every thread partial,
    moved 53-82% of copy); a row of 5000 takes 160 threads of 32, one partial and three idle,
    where 128 of 64 left 49 threads partial or idle (r47). Rows that fill whole warps at
    either build take 32 elements a thread (8192 on 256 threads, 6144 on 192, 4096 on 128):
    half the chain each thread walks between its loads and its stores, +1.2 to +2.4 points of
    copy for layer_norm and softmax at rows of 6144 and 8192 against 64 (r50). 64 where 32
    would need more than 512 threads. Past 512 threads ``with_chunks`` says the row does not
    fit."""
    # (slots past the row's end, or 2^62 + the shortfall where the row does not fit; threads; p)
    def option(p):
        threads = min(max(32, whole_warps(n, p)), MAX_THREADS)
        past = threads * p - n
        return (past if past >= 0 else (1 << 62) - past), threads, p

    _, threads, p = min(map(option, choices), key=lambda o: o[0])  # the first of equals
    return RowConfig("regs", threads, per_thread=p)


def lane_elements(n: int, slot: int, lanes: int) -> int:
    """Elements a lane holds where ``lanes`` lanes hold a row of ``n`` elements in whole slot
    groups of ``slot`` (a row of no elements takes one group)."""
    return slot * -(-max(1, -(-n // slot)) // lanes)


def lanes_config(n: int, slot: int, per_thread: int = PER_THREAD, block: int = LANES_BLOCK,
                 groups_max: int | None = None) -> RowConfig | None:
    """The lanes layout for rows of ``n`` elements in slot groups of ``slot`` (16 bytes):
    the fewest lanes a row (:data:`LANES`) whose threads hold the row in at most
    ``groups_max`` groups each (an op's own; default :data:`LANES_GROUPS`), 32 lanes from
    :data:`LANES_WIDE` groups a row or where
    fewer would hold more, up to ``per_thread`` elements a lane; a thread as many whole slot
    groups as that takes (a build per group count, never per row length), ``block`` threads
    a block. None where a row needs more than 32 lanes of ``per_thread``."""
    groups_max = LANES_GROUPS if groups_max is None else groups_max
    groups = max(1, -(-n // slot))
    for lanes in LANES:
        p = lane_elements(n, slot, lanes)
        if lanes == LANES[-1]:
            return RowConfig("lanes", lanes, block // lanes, per_thread=p) \
                if p <= per_thread else None
        if p <= min(per_thread, slot * groups_max) and groups < LANES_WIDE:
            return RowConfig("lanes", lanes, block // lanes, per_thread=p)
    return None


def with_chunks(cfg: RowConfig, n: int, per_thread: int | None = None) -> RowConfig:
    """A user-given config for a kernel whose threads hold ``per_thread`` elements (default:
    the config's own), a split one with its chunk count fitted to ``n``."""
    if per_thread is not None:
        cfg = replace(cfg, per_thread=per_thread)
    if cfg.variant != "split":
        if n > cfg.capacity:
            raise NbkernelsError(f"config: a {cfg.variant} layout of {cfg.threads} threads holds "
                                 f"{cfg.capacity} elements per row, the rows have {n}")
        return cfg
    return replace(cfg, rows_per_block=1, chunks=max(1, -(-n // cfg.capacity)))


# --- how many blocks loop over the rows ------------------------------------------------------
@dataclass(frozen=True)
class SmLimits:
    """What one SM holds at once (device attributes; the defaults are sm_90's)."""

    threads: int = 2048
    blocks: int = 32
    registers: int = 65536
    smem: int = 233472  # bytes, the largest carveout (228 KB on sm_90, 164 KB on sm_80)
    reserved_smem: int = 1024  # per block, taken by the system (sm_80+)
    smem_granule: int = 128
    reg_granule: int = 256  # registers are allocated per warp in units of this
    partitions: int = 4  # an SM's registers are split among its warp schedulers
    #: named barriers an SM holds for its blocks; a block takes as many as its kernel uses
    #: (ptxas's "used N barriers": 16 where an id is computed at run time). The driver's
    #: occupancy query on the H200 gives min(32, 64 // N) blocks (session 45, run D:
    #: tools/barrier_occupancy.py, N = 1 ... 16); other archs' pools not measured
    barriers: int = 64
    #: the GPU's peak DRAM bandwidth divided by its SMs, GB/s (0: unknown); picks the layout
    #: of short blocks (:func:`layout_mode`)
    dram_gbps_per_sm: float = 0.0


def resident_blocks(threads: int, regs: int, smem: int, lim: SmLimits = SmLimits(),
                    barriers: int = 1) -> int:
    """Blocks of ``threads`` threads, ``regs`` registers per thread, ``smem`` bytes of
    shared memory (static + dynamic) and ``barriers`` named barriers (the kernel's
    ``nbk_barriers``) that one SM runs at once: the CUDA occupancy calculator's rule
    (registers go to warps in 256-register units, per scheduler partition; shared memory in
    128-byte units plus the per-block reserve; the SM's barriers shared out whole). 0 if one
    does not fit."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // lim.reg_granule) * lim.reg_granule
    by_regs = (lim.registers // lim.partitions // per_warp) * lim.partitions // warps \
        if per_warp else lim.blocks
    per_block = -(-(smem + lim.reserved_smem) // lim.smem_granule) * lim.smem_granule
    by_smem = lim.smem // per_block
    by_barriers = lim.barriers // max(1, barriers)
    return max(0, min(lim.blocks, lim.threads // (warps * 32), by_regs, by_smem, by_barriers))


#: Block layouts take their rows in row order, by the GPU's peak DRAM bandwidth per SM
#: (perf-notes r18; % of copy, rms_norm, layer_norm, softmax at rows of 2048-16384, bf16 and
#: f32):
#:
#: * at most PER_ROW_MAX_GBPS_PER_SM (the H100 SXM: 3.35 TB/s / 132 SMs = 25 GB/s an SM): a
#:   block per row. +5 to +9 points over every loop there. At 512 threads (rows of 16384) a
#:   block per row was 9-17 points below the loops, and blocks of two rows (below) +2 to +6
#:   above them, so those take the pairs.
#: * above it (the H200: 4.9 TB/s / 132 = 37 GB/s an SM), where the kernel's own choice is a
#:   loop: blocks of two rows with two buffers (the second row's copies in flight behind the
#:   first), unless the second buffer costs resident blocks. +5 to +8 points for the 16-bit
#:   rms_norm and softmax, and for the float32 kernels that looped. A block per row there was
#:   below the loops for 6 of the 9 16-bit cases (down to -8): one row in flight a block is
#:   too little for the H200's DRAM. At 512 threads the H200 keeps the kernel's own choice
#:   (pairs lost 3-15 points for 16-bit rows of 16384 there, and won for float32).
#:
#: Both keep the rows in flight near each other; a likely reason (not profiled) they beat the
#: loops that walk rows b, b + blocks, ...: those blocks drift apart, and so do the rows they
#: read and write at once. The bound lies between the two GPUs measured; others are
#: unmeasured (A100: 19 GB/s an SM; a block per row).
PER_ROW_MAX_THREADS = 256
PER_ROW_MAX_GBPS_PER_SM = 30.0
#: NBKERNELS_ROWS_LOOP's values: a block per row, rings of 1, 2 or 4 buffers, blocks of two rows
LOOP_MODES = ("0", "1", "2", "4", "pairs")


def wide_dram(lim: SmLimits) -> bool:
    """Whether this GPU's DRAM feeds an SM more than :data:`PER_ROW_MAX_GBPS_PER_SM` (the
    H200's side of the rule; False where the bandwidth is unknown)."""
    return lim.dram_gbps_per_sm > PER_ROW_MAX_GBPS_PER_SM


def layout_mode(cfg: RowConfig, lim: SmLimits, own: str | None = None) -> str | None:
    """The layout :data:`PER_ROW_MAX_GBPS_PER_SM` picks for ``cfg`` on this GPU: "0" (a block
    per row), "pairs" (blocks of two rows, :func:`plan_loop`), or None: ``own``, the kernel's
    own default (``nbk_loop_by_threads``, ``nbk_loop_default``; None is the automatic loop)."""
    if cfg.variant != "block" or lim.dram_gbps_per_sm <= 0:
        return None
    narrow = not wide_dram(lim)  # the H100's side (runs A-I)
    small = cfg.threads <= PER_ROW_MAX_THREADS
    if narrow and small:
        return "0"
    if narrow != small:  # 512 threads at <= 30 GB/s (run H), <= 256 above (runs F, G)
        return "pairs" if own != "0" else None
    return None  # 512 threads above 30 GB/s: the kernel's own choice


def shared_groups(cfg: RowConfig, lim: SmLimits, regs: int, static_smem: int, row_bytes: int,
                  vec_bytes: int, max_smem: int, most: int = MAX_THREADS,
                  barriers: int = 1) -> int:
    """Row groups a block holds where they share one staged copy of the vectors (a kernel's
    ``nbk_vec_shared``, perf-notes r35): the count (1, 2, 4, ...; blocks of at most ``most``
    threads) that keeps the most groups resident on an SM with one buffer each, the fewest
    on a tie. 1 for the warp layout, whose blocks hold ``rows_per_block`` groups already. A
    group meets on named barrier 1 + its first warp: that warp is at most 14. ``barriers``:
    the named barriers a block of the kernel takes (:func:`resident_blocks`)."""
    if cfg.variant != "block":
        return 1
    best, best_g, g = 0, 1, 1
    while cfg.threads * g <= most and (g - 1) * cfg.threads // 32 <= 14:
        smem = cfg.threads * (g * row_bytes + vec_bytes) + static_smem
        if smem > max_smem:
            break
        n = g * resident_blocks(cfg.threads * g, regs, smem, lim, barriers)
        if n > best:
            best, best_g = n, g
        g *= 2
    return best_g


def plan_loop(cfg: RowConfig, items: int, sms: int, lim: SmLimits, regs: int, static_smem: int,
              row_bytes: int, vec_bytes: int, max_smem: int, mode: str | None = None,
              max_buffers: int = 4, fallback: str | None = None, pairs_as=None,
              shared: bool = False, groups: int = 1, barriers: int = 1, pairs_else=None):
    """(blocks, buffers, dynamic shared memory) for ``items`` row groups (or chunks) in the
    looping layout ``cfg``. A thread stages ``row_bytes`` per buffer and ``vec_bytes`` once
    (weight, bias). A ring of :data:`AUTO_BUFFERS` (2) where it fits in a block and leaves
    at least two blocks per SM, or as many as one buffer does; else one buffer. Blocks: as many
    as stay resident (``lim``, ``regs`` registers per thread), at most one per item.
    ``mode`` (NBKERNELS_ROWS_LOOP) "0": a block per item, one buffer (no loop: the layout
    before the loop, for comparison); "1", "2", "4": that many buffers (fewer where they do
    not fit, or beyond ``max_buffers``, the deepest ring the kernel is built for); "pairs":
    blocks of two items in item order (block b takes items b and b + blocks) with two
    buffers, a block per item where that many blocks would not fill every SM, and
    ``fallback``'s plan where the second buffer costs resident blocks. ``pairs_as`` (None: the
    rule just said): ``(rows, buffers)``, the blocks of several rows a kernel measured faster at
    this block size whatever residency they cost (perf-notes r22, r24, r25), taken where they
    keep at least two blocks an SM; with one buffer a block works its rows one after the other
    (block b takes rows b, b + blocks, ...: row order in each window). ``pairs_else``: such
    blocks taken only where the rule's two rows of two buffers would cost resident blocks
    (a kernel's ``nbk_pairs_else_by_threads``, perf-notes r47).
    ``max_smem``: the per-block opt-in limit, which ``static_smem`` + the dynamic size must
    respect. ``shared``: the block's groups share one copy of the vectors (``vec_bytes`` for
    one group's threads), and a block layout's blocks hold ``groups`` row groups each
    (:func:`shared_groups`): ``items`` (row groups of ``cfg``) go ``groups`` to a block.
    ``barriers``: the named barriers a block takes (:func:`resident_blocks`)."""
    block = cfg.threads * cfg.rows_per_block * groups
    items = -(-items // groups)  # blocks' worth

    def smem(nbuf):
        if shared:  # a group is cfg.threads threads in either layout
            return block * nbuf * row_bytes + cfg.threads * vec_bytes
        return block * (nbuf * row_bytes + vec_bytes)

    def fits(nbuf):
        return smem(nbuf) + static_smem <= max_smem  # static + dynamic: the per-block limit

    def resident(nbuf):
        return resident_blocks(block, regs, smem(nbuf) + static_smem, lim, barriers)

    if mode == "pairs" and not (cfg.blocks or cfg.buffers):
        k, b = pairs_as or (2, 2)
        ok = max_buffers >= b and fits(b) and (resident(b) >= 2 if pairs_as else
                                               resident(2) >= resident(1))
        if not ok and pairs_as is None and pairs_else is not None:
            k, b = pairs_else
            ok = max_buffers >= b and fits(b) and resident(b) >= 2
        if ok:
            pairs = -(-items // k)
            if pairs >= resident(b) * sms:
                return pairs, b, smem(b)
            mode = "0"  # all rows in one round: a block each
        else:
            mode = fallback
    if mode == "0" and not (cfg.blocks or cfg.buffers):
        return items, 1, smem(1)
    nbuf = cfg.buffers or (int(mode) if mode in ("1", "2", "4") else 0)
    if not nbuf:
        one = resident(1)
        nbuf = next((b for b in (AUTO_BUFFERS,) if fits(b) and resident(b) >= min(2, one)), 1)
    while nbuf > 1 and (nbuf > max_buffers or not fits(nbuf)):
        nbuf //= 2
    blocks = cfg.blocks or max(1, resident(nbuf)) * sms
    return max(1, min(blocks, items)), nbuf, smem(nbuf)


MAX_GRID_X = 2**31 - 1


def check_launch(name: str, grid: int, block: int, smem: int, static_smem: int,
                 max_threads: int, max_smem: int):
    """Raise a NbkernelsError naming the kernel and its launch if ``grid`` blocks of ``block``
    threads with ``smem`` bytes of dynamic and ``static_smem`` of static shared memory break a
    limit the driver would refuse with a bare CUDA_ERROR_INVALID_VALUE: threads above the
    kernel's launch bound (``max_threads``) or 1024, static + dynamic shared memory above the
    per-block opt-in maximum (``max_smem``), an empty or too large grid."""
    why = []
    if not 1 <= block <= min(max_threads, 1024):
        why.append(f"{block} threads per block (launch bound {max_threads})")
    if static_smem + smem > max_smem:
        why.append(f"{static_smem} B static + {smem} B dynamic shared memory = "
                   f"{static_smem + smem} B per block (this GPU allows {max_smem})")
    if not 1 <= grid <= MAX_GRID_X:
        why.append(f"a grid of {grid} blocks")
    if why:
        raise NbkernelsError(f"{name}: launch of grid {grid} x block {block} with {smem} B "
                             f"dynamic shared memory exceeds a launch limit: "
                             f"{'; '.join(why)}")
