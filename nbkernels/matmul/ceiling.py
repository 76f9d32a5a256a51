"""The ``mma.sync`` ceiling: what the tensor cores give the sm_80-class GEMM's instruction when
nothing else runs, measured in the same benchmark run as the GEMM.

Issue #3 sets the sm_80-class target at 85% of this ceiling (460 TFLOPS bf16 measured once on
an H200, shared/notes/device-facts.md). The figure depends on the clock the board runs at, and
the clock on what ran before and for how long (perf-notes t3: after 0.3 s of running, cuBLAS
itself loses 10-20%). So the benchmark times this kernel as one more job beside the GEMM, in the
same passes and for the same number of flops, and reports the GEMM's share of it.

The kernel: every warp holds one A and one B fragment (random values, not zeros) and runs
``CHAINS`` independent ``m16n8k16`` accumulator chains, ``iters`` MMAs each, from registers
only: the same operands every MMA and no memory traffic, so it draws less power than a GEMM
and keeps its clock where a GEMM loses it (perf-notes t3). 8 chains of 8 warps a block is the
configuration device-facts measured (4 chains are latency-bound); ``Ceiling`` launches two
blocks an SM (16 warps). On an H200 it gives 548-644 TFLOPS bf16 / f16 in the benchmark, 439 /
497 for one call right after 2 s idle, near the issue's 460. Each thread writes the
sum of its chains' accumulators, so nothing is dead code, and the result can be checked
(``reference``): ``CHAINS * iters`` times the warp's ``A @ B`` in the accumulator layout.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32

from .. import intrinsics as I
from ..intrinsics.mma import a_m16n8k16_16bit, acc_m16n8, b_m16n8k16_16bit

CHAINS = 8
WARPS = 8  # per block
FLOPS_PER_MMA = 2 * 16 * 8 * 16
_MMA = {"bf16": I.mma_m16n8k16_bf16_f32, "f16": I.mma_m16n8k16_f16_f32}


@functools.lru_cache(maxsize=None)
def kernel(kind: str):
    """The ceiling kernel for ``kind`` ("bf16" or "f16"): ``k(frags, iters, out)`` with
    ``frags`` uint32 (threads, 6) (A's four registers, then B's two) and ``out`` float32
    (threads, 4)."""
    if kind not in _MMA:
        raise ValueError(f"ceiling kind: expected one of {sorted(_MMA)}, got {kind!r}")
    mma = _MMA[kind]

    @cuda.jit
    def ceiling(frags, iters, out):
        t = cuda.grid(1)
        a = (frags[t, 0], frags[t, 1], frags[t, 2], frags[t, 3])
        b = (frags[t, 4], frags[t, 5])
        z = float32(0)
        c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = (z, z, z, z)
        for _ in range(iters):
            c0 = mma(a, b, c0)
            c1 = mma(a, b, c1)
            c2 = mma(a, b, c2)
            c3 = mma(a, b, c3)
            c4 = mma(a, b, c4)
            c5 = mma(a, b, c5)
            c6 = mma(a, b, c6)
            c7 = mma(a, b, c7)
        for i in range(4):
            out[t, i] = (c0[i] + c1[i] + c2[i] + c3[i]) + (c4[i] + c5[i] + c6[i] + c7[i])

    return ceiling


def fragments(rng, threads: int, kind: str, exact: bool = False) -> np.ndarray:
    """Random fragments: (threads, 6) uint32 of packed 16-bit values (``exact``: small
    integers, so that sums of products are exact in float32)."""
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if kind == "bf16" else np.float16
    vals = rng.integers(-3, 4, threads * 12) if exact else rng.standard_normal(threads * 12)
    halves = vals.astype(dt).view(np.uint16).astype(np.uint32).reshape(threads, 6, 2)
    return halves[..., 0] | (halves[..., 1] << 16)


def reference(frags: np.ndarray, iters: int, kind: str) -> np.ndarray:
    """float64 ``out`` of :func:`kernel` for these fragments: per warp, ``CHAINS * iters`` times
    ``A @ B`` of the matrices its lanes' fragments hold, in the accumulator layout."""
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if kind == "bf16" else np.float16
    halves = np.stack([frags & 0xFFFF, frags >> 16], -1).astype(np.uint16)
    vals = halves.view(dt).astype(np.float64).reshape(-1, 12)  # A: 0..7, B: 8..11
    out = np.empty((len(frags), 4))
    for w in range(len(frags) // 32):
        A, B = np.empty((16, 16)), np.empty((16, 8))
        for lane in range(32):
            for i in range(8):
                A[a_m16n8k16_16bit(lane, i)] = vals[32 * w + lane, i]
            for i in range(4):
                B[b_m16n8k16_16bit(lane, i)] = vals[32 * w + lane, 8 + i]
        D = A @ B * (CHAINS * iters)
        for lane in range(32):
            for i in range(4):
                out[32 * w + lane, i] = D[acc_m16n8(lane, i)]
    return out


class Ceiling:
    """A benchmark job: ``job()`` runs the ceiling kernel for about ``flops`` (rounded to whole
    iterations), ``job.flops`` is what it ran. On the current CuPy device and stream."""

    def __init__(self, kind: str, flops: float, blocks_per_sm: int = 2):
        import cupy

        dev = cupy.cuda.Device()
        self.blocks = dev.attributes["MultiProcessorCount"] * blocks_per_sm
        threads = self.blocks * WARPS * 32
        per_iter = self.blocks * WARPS * CHAINS * FLOPS_PER_MMA
        self.iters = max(1, round(flops / per_iter))
        self.flops = float(self.iters * per_iter)
        self.kind = kind
        self.frags = cupy.asarray(fragments(np.random.default_rng(), threads, kind))
        self.out = cupy.empty((threads, 4), np.float32)
        self._k = kernel(kind)

    def __call__(self, *_ignored):
        import cupy

        stream = cuda.external_stream(cupy.cuda.get_current_stream().ptr)
        self._k[self.blocks, WARPS * 32, stream](self.frags, self.iters, self.out)
