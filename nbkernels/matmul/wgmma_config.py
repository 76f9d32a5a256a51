"""Tile configurations of the Hopper (sm_90a) GEMM and the rule that picks one.

A configuration is compiled once per (dtype, operand majors, epilogue) and reused for every
problem size; M, N, K, batch and the operands' addresses reach the kernel at launch (the
addresses through TMA tensor maps).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import NbkernelsError

#: K extent of a stage in elements: one 128-byte swizzled row per M (or N) row for 16-bit
#: types, the widest row a 128-byte-swizzled TMA box may have.
BK = 64
ROW_BYTES = 128
SMEM_ALIGN = 1024  # the 128-byte swizzle repeats every 8 rows: boxes start on 1024 bytes


@dataclass(frozen=True)
class WgmmaConfig:
    """``bm x bn`` outputs per tile; ``bm // 64`` consumer warpgroups, one producer warp-
    group; a ``stages``-deep ring of shared-memory stages filled by TMA."""

    bm: int = 128
    bn: int = 256
    stages: int = 4
    group_m: int = 8  # tile rasterization: tiles walk N within groups of group_m tile-rows

    def __post_init__(self):
        problems = []
        if self.bm not in (64, 128, 192, 256):
            problems.append(f"bm must be 64, 128, 192 or 256, got {self.bm}")
        if self.bn % 64 or not 64 <= self.bn <= 256:
            problems.append(f"bn must be 64..256 in steps of 64, got {self.bn}")
        if not 2 <= self.stages <= 8:
            problems.append(f"stages must be in [2, 8], got {self.stages}")
        if problems:
            raise NbkernelsError(f"WgmmaConfig{self.key}: " + "; ".join(problems))

    @property
    def consumers(self) -> int:
        return self.bm // 64

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)

    @property
    def key(self) -> tuple:
        return (self.bm, self.bn, self.stages, self.group_m)

    @property
    def stage_bytes(self) -> int:
        return (self.bm + self.bn) * ROW_BYTES

    def smem_bytes(self, kind: str = "bf16") -> int:
        """Dynamic shared memory: the ring, plus slack to align it to 1024 bytes (16-bit
        kinds only; ``kind`` for the sm_80 TileConfig's signature)."""
        return self.stages * self.stage_bytes + SMEM_ALIGN

    def __str__(self):
        return (f"{self.bm}x{self.bn}x{BK} tile, {self.consumers} consumer warpgroups + 1 TMA "
                f"producer, {self.stages} stages, persistent")


#: 128x256 with 4 stages: 192 KB of ring, 128 accumulator registers per consumer thread.
DEFAULT = WgmmaConfig(128, 256, 4)
#: For problems with few 128x256 tiles: twice the tiles, 6 stages in the same memory.
SMALL = WgmmaConfig(128, 128, 6)
CANDIDATES = (DEFAULT, SMALL, WgmmaConfig(128, 256, 3), WgmmaConfig(128, 128, 4),
              WgmmaConfig(256, 128, 4))


def choose(m: int, n: int, batch: int, sm_count: int, max_smem: int) -> WgmmaConfig:
    """The default tile when it gives every SM a tile, else the smaller one."""
    def tiles(c):
        return -(-m // c.bm) * -(-n // c.bn) * batch

    for cfg in (DEFAULT, SMALL):
        if cfg.smem_bytes() <= max_smem and tiles(cfg) >= sm_count:
            return cfg
    fitting = [c for c in (SMALL, DEFAULT) if c.smem_bytes() <= max_smem]
    if not fitting:
        raise NbkernelsError(f"gemm: no sm90a tile fits in {max_smem} bytes of shared memory")
    return fitting[0]
