"""Tile configurations of the Hopper (sm_90a) GEMM and the rule that picks one.

A configuration is compiled once per (dtype, operand majors, epilogue) and reused for every
problem size; M, N, K, batch and the operands' addresses reach the kernel at launch (the
addresses through TMA tensor maps).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import NbkernelsError
from ..smem import SM90_OPTIN

#: K extent of a stage in elements: one 128-byte swizzled row per M (or N) row for 16-bit
#: types, the widest row a 128-byte-swizzled TMA box may have.
BK = 64
ROW_BYTES = 128
SMEM_ALIGN = 1024  # the 128-byte swizzle repeats every 8 rows: boxes start on 1024 bytes
WARP_STAGING = 16 * ROW_BYTES  # staged epilogue, per consumer warp: 16 rows of a 64-column chunk

#: Registers beyond its accumulators that ptxas needs to compile a consumer's wgmma: it asked
#: for 154 with 128 accumulators (192x256, four warpgroups: "Insufficient registers (128)")
#: and 122 with 96 (256x192, five: capped at 96); 192x192 (96 under a cap of 128) assembles
#: without spills (session 38, perf-notes s21).
ENTRY_SPARE = 26


@dataclass(frozen=True)
class WgmmaConfig:
    """``bm x bn`` outputs per tile, one producer warpgroup, a ``stages``-deep ring of shared-
    memory stages filled by TMA. Cooperative (default): ``bm // 64`` consumer warpgroups
    share each tile, 64 rows each. ``pingpong``: two consumer warpgroups take alternate tiles
    whole, so one runs its epilogue while the other runs its main loop.

    ``cluster=2``: clusters of two blocks on two vertically neighbouring tiles (rows m and
    m + 1 of tiles, the same columns), which share their B tile: each block loads its own A and
    half of B, multicast into both blocks' shared memory (half the B traffic from L2)."""

    bm: int = 128
    bn: int = 256
    stages: int = 4
    group_m: int = 8  # tile rasterization: tiles walk N within groups of group_m tile-rows
    pingpong: bool = False
    wg_rows: int = 64  # cooperative: tile rows per consumer warpgroup (64 or 128)
    cluster: int = 1  # blocks per cluster along M (2: the pair shares B by TMA multicast)
    #: epilogue of 16-bit results in 16-byte aligned rows (beta == 0, tiles inside N): staged
    #: through shared memory and stored 16 bytes per lane (+8-22% on an H200, perf-notes s5-s6).
    #: False keeps the guarded 32-bit pairs (for comparison; bench suffix ``g``).
    staged: bool = True
    #: the staged epilogue's global stores made by the producer warpgroup's three idle warps:
    #: the consumers stage the whole tile (``bm * bn * 2`` bytes of shared memory) and go on
    #: to the next tile's wgmma; bench suffix ``o``. Cooperative, unclustered tiles only.
    offload: bool = False
    #: k-tiles of wgmma a consumer leaves in flight when it waits (``wgmma.wait_group(depth)``);
    #: their stages are freed ``depth`` k-tiles later. Bench suffix ``d2``, ``d3``.
    depth: int = 1
    #: split tail (of stream-K's family): where the last wave of whole tiles would fill at
    #: most half the blocks, each of its tiles is split into two K halves that two blocks run
    #: side by side, after their whole tiles. The block with the first half finishes the tile:
    #: it adds the other's partial accumulators (through a workspace in global memory) before
    #: the epilogue. Cooperative, unclustered tiles of 64-row consumers without offload;
    #: bench suffix ``k``. (Until session 17 this field shared out the k-tiles of a wave and a
    #: half in contiguous ranges, measured 5-21% slower than the default: perf-notes s12.)
    streamk: bool = False
    #: deferred stores: the last ``defer`` 64-column chunks of each staged tile stay in shared
    #: memory (2 KB per consumer warp and chunk) and are stored during the consumers' next
    #: tile, one chunk after each k-tile's wgmma are issued, while they run (chunks the next
    #: tile's k-tiles do not cover are stored before its k-loop, the block's last tile's at
    #: the end). The stores then overlap the tensor cores instead of following them (perf-notes
    #: s16, s17). Staged, cooperative, unclustered tiles of 64-row consumers without offload;
    #: bench suffix ``eD``.
    defer: int = 0

    def __post_init__(self):
        problems = []
        if self.bm not in (64, 128, 192, 256):
            problems.append(f"bm must be 64, 128, 192 or 256, got {self.bm}")
        if self.bn % 64 or not 64 <= self.bn <= 256:
            problems.append(f"bn must be 64..256 in steps of 64, got {self.bn}")
        if not 2 <= self.stages <= 8:
            problems.append(f"stages must be in [2, 8], got {self.stages}")
        if self.wg_rows not in (64, 128) or self.bm % self.wg_rows:
            problems.append(f"wg_rows must be 64 or 128 and divide bm, got {self.wg_rows}")
        elif not self.pingpong and self.wg_rows * self.bn > 128 * 128:
            problems.append(f"a consumer holds {self.wg_rows}x{self.bn} accumulators: at most "
                            "128 registers (wg_rows * bn <= 16384)")
        elif self.entry_registers() < self.accumulator_registers() + ENTRY_SPARE:
            problems.append(
                f"{self.threads} threads cap a thread at {self.entry_registers()} registers at "
                f"launch, and ptxas needs {self.accumulator_registers() + ENTRY_SPARE} to "
                f"compile a consumer's {self.accumulator_registers()} accumulator registers "
                f"(fewer consumers, or a smaller bm * bn)")
        if self.pingpong and self.wg_rows != 64:
            problems.append("wg_rows is for cooperative tiles (ping-pong consumers hold whole tiles)")
        if self.pingpong and self.bm * self.bn > 128 * 128:
            problems.append(f"a ping-pong consumer holds the whole {self.bm}x{self.bn} tile: "
                            "at most 128 accumulator registers (bm * bn <= 16384)")
        if self.cluster not in (1, 2):
            problems.append(f"cluster must be 1 or 2 blocks, got {self.cluster}")
        if self.offload and (self.pingpong or self.cluster != 1 or not self.staged):
            problems.append("offload (the producer's warps store the staged tile) is for "
                            "cooperative, unclustered, staged tiles")
        if self.streamk and not self.takes_split_tail:
            # (consumers of 128 rows, two accumulators each, spilled 140 B with a fused
            # epilogue: CI31)
            problems.append("streamk (a split tail: the last wave's tiles in K halves) is for "
                            "cooperative, "
                            "unclustered tiles of 64-row consumers without offload")
        if not 0 <= self.defer <= self.bn // 64:
            problems.append(f"defer (64-column chunks whose stores wait for the next tile) must "
                            f"be in [0, bn / 64 = {self.bn // 64}], got {self.defer}")
        elif self.defer and not (self.staged and self.takes_split_tail):
            problems.append("defer (stores of staged chunks during the next tile) is for staged, "
                            "cooperative, unclustered tiles of 64-row consumers without offload")
        elif self.defer and not self.stages_in(SM90_OPTIN):
            problems.append(f"ring and staging need {self.smem_bytes() + self.staging_bytes()} "
                            f"bytes of shared memory; a Hopper block has at most {SM90_OPTIN}")
        if not 1 <= self.depth < self.stages:
            problems.append(f"depth (k-tiles of wgmma in flight) must be in [1, stages), got "
                            f"{self.depth}")
        if problems:
            raise NbkernelsError(f"WgmmaConfig{self.key}: " + "; ".join(problems))

    @property
    def takes_split_tail(self) -> bool:
        """Whether ``streamk`` (a split tail) can be set on this tile: cooperative, unclustered
        tiles of 64-row consumers without offload."""
        return not (self.pingpong or self.cluster != 1 or self.offload or self.wg_rows != 64)

    def accumulator_registers(self) -> int:
        """float32 accumulators a consumer thread holds (128 threads hold its rows x bn)."""
        return (self.bm if self.pingpong else self.wg_rows) * self.bn // 128

    def entry_registers(self) -> int:
        """The registers ptxas may give a thread of this block: what the launch bound leaves
        (65536 / threads, in steps of 8, at most 255). setmaxnreg moves registers at run time
        but compiles nothing past this cap (wgmma_kernel.consumer_regs)."""
        return min(255, 65536 // self.threads // 8 * 8)

    @property
    def consumers(self) -> int:
        return 2 if self.pingpong else self.bm // self.wg_rows

    @property
    def blocks_m(self) -> int:
        """64-row wgmma blocks one consumer computes per tile."""
        return self.bm // 64 if self.pingpong else self.wg_rows // 64

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)

    @property
    def key(self) -> tuple:
        """The fields in order, the trailing defaults left out: ``WgmmaConfig(*key)`` is the
        config again (the prewarm jobs and the autotuner's table rebuild it so)."""
        base = (self.bm, self.bn, self.stages, self.group_m, self.pingpong, self.wg_rows)
        if self.defer:
            return base + (self.cluster, self.staged, self.offload, self.depth, self.streamk,
                           self.defer)
        if self.streamk:
            return base + (self.cluster, self.staged, self.offload, self.depth, True)
        if self.depth != 1:
            return base + (self.cluster, self.staged, self.offload, self.depth)
        if self.offload:
            return base + (self.cluster, self.staged, True)
        if self.cluster != 1 or not self.staged:
            base += (self.cluster,)
        return base if self.staged else base + (False,)

    @property
    def stage_bytes(self) -> int:
        return (self.bm + self.bn) * ROW_BYTES

    def smem_bytes(self, kind: str = "bf16") -> int:
        """Dynamic shared memory: the ring, plus slack to align it to 1024 bytes (16-bit
        kinds only; ``kind`` for the sm_80 TileConfig's signature)."""
        return self.stages * self.stage_bytes + SMEM_ALIGN

    def staging_bytes(self) -> int:
        """Shared memory the staged epilogue adds behind the ring: 2 KB per consumer warp (one
        64-column chunk of its 16 rows), or per consumer warp and deferred chunk (``defer``),
        or with ``offload`` the whole tile (2 KB per warp and chunk of each of its 64-row
        blocks). Calls whose results cannot be staged do not allocate it."""
        if self.offload:
            per_warp = self.blocks_m * self.bn // 64
        else:
            per_warp = max(1, self.defer)
        return 4 * self.consumers * per_warp * WARP_STAGING

    def stages_in(self, max_smem: int) -> bool:
        """Whether calls with this tile stage their epilogue (where D allows it) on a device
        whose blocks may have ``max_smem`` bytes of shared memory: ring and staging fit."""
        return self.staged and self.smem_bytes() + self.staging_bytes() <= max_smem

    def __str__(self):
        how = "ping-pong" if self.pingpong else f"cooperative ({self.wg_rows}-row)"
        pair = ("" if self.cluster == 1 else
                f", clusters of {self.cluster}x1 blocks sharing B tiles by TMA multicast")
        return (f"{self.bm}x{self.bn}x{BK} tile, {self.consumers} {how} consumer warpgroups + "
                f"1 TMA producer, {self.stages} stages, persistent{pair}"
                + ("" if self.staged else ", guarded-store epilogue")
                + (", stores by the producer's warps" if self.offload else "")
                + (f", {self.depth} k-tiles of wgmma in flight" if self.depth != 1 else "")
                + (", the last wave's tiles split in K halves" if self.streamk else "")
                + (f", stores of {self.defer} of {self.bn // 64} chunks a tile deferred into "
                   "the next tile's main loop" if self.defer else ""))

    @property
    def cluster_dims(self):
        """The launch's cluster shape (blocks along the grid's x)."""
        return (self.cluster, 1, 1)


#: 128x256, 2 consumer warpgroups of 64x256 (128 accumulator registers each, setmaxnreg 232),
#: 4 stages: 192 KB of ring. H200 run 4 of session 4 (docs/perf-notes.md, s3, the first
#: runs with the wgmma pipelined): 635 / 616 / 569 TFLOPS bf16 at 8192^3 / 4096^3 /
#: 4096x11008x4096 against 631 / 593 / 544 for 256x128x4 (4 consumers of 64 rows). The stores
#: of the last 2 of its 4 chunks deferred into the next tile's k-loop (32 KB more staging,
#: 225 KB in all): +1.1-1.5% at 8192x8192x1024, +0.1-0.7% at 4096^3 and 8192^3 on an H100
#: (perf-notes s18); calls with at most one tile per SM take it without (``choose``).
DEFAULT = WgmmaConfig(128, 256, 4, defer=2)
#: For problems with few tiles: twice the tiles, 6 stages in the same memory.
SMALL = WgmmaConfig(128, 128, 6)
CANDIDATES = (DEFAULT, SMALL, WgmmaConfig(256, 128, 4), WgmmaConfig(256, 128, 4, 8, False, 128),
              WgmmaConfig(128, 256, 3),
              WgmmaConfig(64, 128, 4), WgmmaConfig(128, 128, 6, 8, True),
              WgmmaConfig(64, 256, 5, 8, True))
#: Clusters of two blocks on vertically neighbouring tiles sharing B by TMA multicast (cuBLAS's
#: nvjet kernels run 1x2 / 2x1 clusters at every size profiled). At 128x256 a block moves 48 KB
#: from L2 per k-tile alone and 32 KB in a pair. Measured within -4..+5% of the same tile
#: alone (perf-notes s4, s7): opt-in (tile=), not chosen.
CLUSTER_CANDIDATES = (WgmmaConfig(128, 256, 4, cluster=2), WgmmaConfig(256, 128, 4, 8, False, 128,
                                                                      cluster=2),
                      WgmmaConfig(128, 128, 6, 8, True, cluster=2))
CANDIDATES = CANDIDATES + CLUSTER_CANDIDATES
#: A last wave of tiles this short against the SM count still favours the larger tile
#: (run 1, 2048^3: 128 tiles of 256x128 on 132 SMs, 276 TFLOPS; 512 of 128x128: 232;
#: session 4 run 4: 128 tiles of 128x256, 303).
FILL = 0.9


#: The split tail (``streamk``) is chosen where it splits a last wave after at least one full
#: one and each K half keeps this many k-tiles: measured there (perf-notes s14), +1.4% to +21%
#: at K of 4096 and 8192; where it does not split, its build costs about 1%.
SPLIT_TAIL_MIN_HALF_KTILES = 16


def k_tiles(k: int) -> int:
    """k-tiles of BK elements a tile's K loop runs for ``k`` (the last one cut, zero-filled)."""
    return -(-int(k) // BK)


def with_split_tail(cfg: WgmmaConfig, tiles: int, sm_count: int, k: int) -> WgmmaConfig:
    """``cfg`` with the split tail where it pays: the tile takes it, there are more tiles than
    SMs and the last wave is split, into K halves of at least SPLIT_TAIL_MIN_HALF_KTILES."""
    from .wgmma_kernel import split_tail

    ktiles = k_tiles(k)
    if (cfg.streamk or not cfg.takes_split_tail
            or tiles <= sm_count or ktiles < 2 * SPLIT_TAIL_MIN_HALF_KTILES
            or not split_tail(tiles, sm_count, ktiles)):
        return cfg
    return replace(cfg, streamk=True)


def choose(m: int, n: int, batch: int, sm_count: int, max_smem: int) -> WgmmaConfig:
    """The default tile when it (nearly) gives every SM a tile, else the smaller one. The
    default's deferred stores only where some block has a next tile to defer them into
    (more tiles than SMs; at 2048^3, 128 tiles, they measured 0.4-2% slower: perf-notes s18)."""
    def tiles(c):
        return -(-m // c.bm) * -(-n // c.bn) * batch

    def deferring(cfg):
        if cfg.defer and (tiles(cfg) <= sm_count or not cfg.stages_in(max_smem)):
            return replace(cfg, defer=0)
        return cfg

    for cfg in (DEFAULT, SMALL):
        if cfg.smem_bytes() <= max_smem and tiles(cfg) >= FILL * sm_count:
            return deferring(cfg)
    fitting = [c for c in (SMALL, DEFAULT) if c.smem_bytes() <= max_smem]
    if not fitting:
        raise NbkernelsError(f"gemm: no sm90a tile fits in {max_smem} bytes of shared memory")
    return deferring(fitting[0])
