"""How a row kernel is laid out on the GPU: the variant, threads per row, rows per block.

Kernels are compiled once per (operation, dtypes, arch); the layout
below is chosen per call from the row length and count and passed as launch arguments, so
no row length ever triggers a compile.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import NbkernelsError
from .device import MAX_THREADS, PER_THREAD

VARIANTS = ("warp", "block", "split")
WARP_ROWS_PER_BLOCK = 4  # 128-thread blocks of one row per warp
SPLIT_THREADS = 256  # a chunk of a long row: 256 threads x 32 values = 8192 elements


@dataclass(frozen=True)
class RowConfig:
    """``variant`` "warp": one warp per row, ``rows_per_block`` rows a block; "block": one
    block of ``threads`` per row; "split": ``chunks`` blocks of ``threads`` per row, a
    partial-statistics pass and a finishing pass (rows longer than a block holds)."""

    variant: str
    threads: int
    rows_per_block: int = 1
    chunks: int = 1

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise NbkernelsError(f"RowConfig.variant: expected one of {VARIANTS}, got "
                                 f"{self.variant!r}")
        if self.threads % 32 or not 32 <= self.threads * self.rows_per_block <= MAX_THREADS:
            raise NbkernelsError(
                f"RowConfig: threads ({self.threads}) must be a multiple of 32 and a block "
                f"(threads x rows_per_block = {self.threads * self.rows_per_block}) at most "
                f"{MAX_THREADS}")
        if self.variant == "warp" and self.threads != 32:
            raise NbkernelsError(f"RowConfig: the warp variant has 32 threads per row, got "
                                 f"{self.threads}")
        if self.variant != "warp" and self.rows_per_block != 1:
            raise NbkernelsError("RowConfig: only the warp variant puts several rows in a block")

    @property
    def capacity(self) -> int:
        """Elements one group holds (a whole row, or one chunk of a split row)."""
        return self.threads * PER_THREAD

    def grid(self, rows: int) -> int:
        if self.variant == "split":
            return rows * self.chunks
        return -(-rows // self.rows_per_block)

    def describe(self) -> str:
        if self.variant == "warp":
            return f"warp per row, {self.rows_per_block} rows per block"
        if self.variant == "block":
            return f"block of {self.threads} threads per row"
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


def choose(n: int, rows: int, sm_count: int, max_threads: int = MAX_THREADS) -> RowConfig:
    """The layout for ``rows`` rows of ``n`` elements on a GPU with ``sm_count`` SMs, where
    shared memory lets a block stage at most ``max_threads`` threads' elements."""
    if n <= 32 * PER_THREAD:
        return RowConfig("warp", 32, WARP_ROWS_PER_BLOCK)
    few_rows = rows * 2 < sm_count  # one block per row would leave most SMs idle
    if n <= max_threads * PER_THREAD and not (few_rows and n > SPLIT_THREADS * PER_THREAD):
        threads = 64
        while threads * PER_THREAD < n:
            threads *= 2
        return RowConfig("block", threads)
    chunk = SPLIT_THREADS * PER_THREAD
    return RowConfig("split", SPLIT_THREADS, 1, -(-n // chunk))


def with_chunks(cfg: RowConfig, n: int) -> RowConfig:
    """A user-given split config with its chunk count fitted to ``n``."""
    if cfg.variant != "split":
        if n > cfg.capacity:
            raise NbkernelsError(f"config: a {cfg.variant} layout of {cfg.threads} threads holds "
                                 f"{cfg.capacity} elements per row, the rows have {n}")
        return cfg
    return RowConfig("split", cfg.threads, 1, max(1, -(-n // cfg.capacity)))
