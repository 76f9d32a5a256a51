"""Tile configurations of the tensor-core GEMM and the arch-aware heuristic that picks one.

A configuration is compiled once per (variant, dtype, layout, arch) and reused for every
problem size: M, N, K, strides and batch are kernel arguments.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import NbkernelsError

#: bytes per element of each operand kind
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "3xtf32": 4, "s8": 1, "f64": 8, "f32": 4}


@dataclass(frozen=True)
class TileConfig:
    """One block tile: ``bm x bn`` outputs per block, ``bk`` of K per pipeline stage."""

    bm: int = 128
    bn: int = 128
    bk_bytes: int = 64  # K extent of a stage, in bytes of one operand row
    warps_m: int = 2
    warps_n: int = 2
    stages: int = 4
    group_m: int = 8  # block rasterization: blocks walk N within groups of group_m rows
    min_blocks: int = 0  # >0: launch bounds asking ptxas to fit this many blocks per SM
    # 1: double-buffer the mma.sync kernel's fragments: k-step kk+1's ldmatrix (across the
    # stage boundary too) is issued before k-step kk's MMAs. Not measured yet: off by default.
    frag_db: int = 0
    # float64 only: the K of one MMA k-group, 16 (mma.m16n8k16.f64 on sm_90+) or 8 (m16n8k8);
    # 0: 16, a whole stage (dmma_kernel); 8 forces two groups a stage; frag_db uses groups of 4
    mma_k: int = 0

    def __post_init__(self):
        wm, wn = self.bm // self.warps_m, self.bn // self.warps_n
        problems = []
        if self.bm % self.warps_m or self.bn % self.warps_n:
            problems.append("bm/bn must divide by warps_m/warps_n")
        if wm % 16 or wn % 16:
            problems.append(f"warp tile {wm}x{wn} must be a multiple of 16x16")
        if self.bk_bytes not in (64, 128):
            problems.append(f"bk_bytes must be 64 or 128, got {self.bk_bytes}")
        if self.mma_k not in (0, 8, 16):
            problems.append(f"mma_k must be 0 (default), 8 or 16, got {self.mma_k}")
        if not 2 <= self.stages <= 8:
            problems.append(f"stages must be in [2, 8], got {self.stages}")
        if problems:
            raise NbkernelsError(f"TileConfig{self.key}: " + "; ".join(problems))

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def key(self) -> tuple:
        return (self.bm, self.bn, self.bk_bytes, self.warps_m, self.warps_n, self.stages,
                self.group_m, self.min_blocks) + (
                    (self.frag_db, self.mma_k) if self.mma_k else
                    (self.frag_db,) if self.frag_db else ())  # TileConfig(*key) rebuilds it

    def bk(self, kind: str) -> int:
        return self.bk_bytes // ELEMENT_BYTES[kind]

    def smem_bytes(self, kind: str) -> int:
        return self.stages * (self.bm + self.bn) * self.bk_bytes

    def __str__(self):
        return (f"{self.bm}x{self.bn}x{self.bk_bytes}B tile, {self.warps_m}x{self.warps_n} warps, "
                f"{self.stages} stages" + (f", >={self.min_blocks} blocks/SM" if self.min_blocks
                                           else "")
                + (", fragments double-buffered" if self.frag_db else "")
                + (f", k-groups of {self.mma_k}" if self.mma_k else ""))


# bf16 / f16 where two 96 KB blocks fit an SM (Hopper's 227 KB; not A100's 163 KB, not the
# 99 KB of sm_86 / sm_89): 128x128 with 128 bytes of K per stage (64 elements) and 3 stages,
# half the barriers and stage waits per flop of the 64-byte tile. H200 session 11 run 1
# (perf-notes v8): 415.7 / 403.9 TFLOPS bf16 at 4096^3 / 8192^3 against 378.9 / 362.6 for the
# 64-byte 4-stage tile. min_blocks=2 is the fit test; at 128 threads it caps no registers.
WIDE_K = TileConfig(128, 128, 128, 2, 2, 3, min_blocks=2)

# The candidates the autotuner measures; the heuristic below picks among them.
CANDIDATES = (
    TileConfig(128, 128, 64, 2, 2, 4),
    TileConfig(128, 256, 64, 2, 4, 3),
    TileConfig(256, 128, 64, 4, 2, 3),
    TileConfig(128, 128, 64, 2, 4, 4),
    TileConfig(64, 128, 64, 2, 2, 4),
    TileConfig(64, 64, 64, 2, 2, 4),
)


def candidates(kind: str) -> tuple:
    """The tiles the autotuner measures for ``kind`` (it drops those that do not fit)."""
    return ((WIDE_K,) if kind in ("bf16", "f16") else ()) + CANDIDATES


# What the heuristic walks, from the most to the least work per block; larger tiles are left
# to the autotuner until measurements say they win by default.
HEURISTIC_ORDER = (CANDIDATES[0], CANDIDATES[4], CANDIDATES[5])
# (bk_bytes 128 with 64x64 warp tiles was dropped in session 2, when its 4 unrolled k-steps
# spilled 176 B/thread; the kernel of session 11 holds them without spills: WIDE_K above.)
# tf32 fragments are twice as wide: 64x64 warp tiles (2x2 warps) spill 24 B/thread on sm_80 and
# sm_90a with ptxas 13.4 (found by `nbkernels compile`); 2x4 warps of 64x32 do not.
# f64 (dmma_kernel): 16 doubles of K per stage (bk_bytes 128); a 64x32 warp tile holds 64 f64
# accumulators (128 registers). H200 run 7: 25-26.5 TFLOPS at 2048^3-8192^3 (0.42x cuBLAS;
# perf-notes d1). 128x128 with 8 warps (one block per SM)
# reads 16 flop/B from L2: 60 TFLOPS on an H200 take ~3.7 TB/s of it; 128x64 with 4 warps
# fits two blocks per SM.
# H200 session 5 run 2 (perf-notes d3, 4096^3 / 8192^3, cuBLAS 60.8 / 61.9): 128x128 2x4 warps
# 3 stages 42.0 / 43.3 TFLOPS; 4 stages 44.3 / 45.5; 4x2 warps 3 stages 44.8 / 46.6; 128x64
# 2x2 warps 4 stages (two 96 KB blocks per SM) 46.6 / 47.9; 64x128 2x2 3 stages 36.1 / 37.3.
# The two-per-SM tile first where two fit (min_blocks: the heuristic skips it on sm_86 / sm_89's
# 99 KB, where 128x128 4x2 takes its place). 3 stages since session 26 (perf-notes d6, runs F,
# one tile a process, with the refill after the first piece; H100, 4 / 3 stages: 0.90 / 0.90x
# cuBLAS at 2048^3, 0.94 / 0.95 at 4096^3, 0.96 / 0.95 at 8192^3; the H200 alike; an M-major a
# 1-2% slower with 3). Two 72 KB blocks fit an A100's 164 KB too, where two 96 KB ones did not
# (it ran 128x128 4x2 before; neither measured there).
F64_TILES = (TileConfig(128, 64, 128, 2, 2, 3, min_blocks=2), TileConfig(128, 128, 128, 4, 2, 3),
             TileConfig(64, 64, 128, 2, 2, 3))
# tf32: 256x128 with 4x2 warps of 64x64 (240 registers on sm_80/86, 238 on sm_90a, no spills)
# first: H200 run 7 (perf-notes), 107.6 / 128.6 TFLOPS at 4096^3 / 8192^3 against 87.4 / 101.8
# for 128x128 with 2x4 warps of 64x32, which stays next for fewer blocks.
ORDER_BY_KIND = {"tf32": (CANDIDATES[2], CANDIDATES[3]) + HEURISTIC_ORDER[1:], "f64": F64_TILES,
                 "bf16": (WIDE_K,) + HEURISTIC_ORDER, "f16": (WIDE_K,) + HEURISTIC_ORDER}
# 3xtf32 keeps two fragments per operand: one tile for every shape, 64x32 warp tiles.
FIXED_TILES = {"3xtf32": TileConfig(128, 128, 64, 2, 4, 3)}


def misfit(cfg: TileConfig, kind: str) -> str | None:
    """Why ``cfg`` cannot run ``kind`` (None: it can)."""
    if kind == "f64" and cfg.bk_bytes != 128:
        return "f64 stages 16 doubles of K (bk_bytes 128)"
    if cfg.mma_k and kind != "f64":
        return "mma_k chooses the float64 kernel's k-group; other kinds have none"
    if cfg.mma_k and cfg.frag_db:
        return "double-buffered fragments use k-groups of 4; mma_k does not apply"
    return None


def heuristic(kind: str, m: int, n: int, k: int, batch: int, sm_count: int,
              max_smem: int) -> TileConfig:
    """Pick a tile for a problem: large tiles when they fill the GPU, smaller ones otherwise."""
    def blocks(cfg):
        return -(-m // cfg.bm) * -(-n // cfg.bn) * batch

    order = ORDER_BY_KIND.get(kind, HEURISTIC_ORDER)
    # a tile that asks for min_blocks per SM only where that many fit (the per-block opt-in
    # limit stands for the SM's shared memory: 227 of 228 KB on Hopper, 163 of 164 on A100)
    fitting = [c for c in order if c.smem_bytes(kind) * max(1, c.min_blocks) <= max_smem]
    if not fitting:
        raise NbkernelsError(f"gemm: no tile configuration fits in {max_smem} bytes of shared memory")
    for cfg in fitting:  # ordered from the most to the least work per block
        if blocks(cfg) >= sm_count:
            return cfg
    # Too few blocks even for small tiles: the smallest tile gives the most parallelism.
    return min(fitting, key=lambda c: c.bm * c.bn)
