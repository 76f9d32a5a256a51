"""SIMT GEMM (no tensor cores): exact float32 (``precision="fp32"``) and float64 on any GPU.

A 64x64 block tile, 16x16 threads each owning 4x4 outputs, K staged in 16-wide shared-memory
tiles. Operands are read through their strides, so every layout works without a copy. Same
argument list and epilogue semantics as the tensor-core kernel.
"""
from __future__ import annotations

from numba import cuda, float32, float64

BM = BN = 64
BK = 16
TM = TN = 4
THREADS = (16, 16)


def _dev(fn):
    return cuda.jit(device=True, inline="always")(fn)


def build_kernel(kind: str, epilogue=None, n_extra: int = 0):
    if kind not in ("f32", "f64"):
        raise ValueError(f"SIMT GEMM has no kind {kind!r}")
    acc_t = float32 if kind == "f32" else float64
    from .mma_kernel import epilogue_call

    apply_epi = epilogue_call(epilogue, n_extra)

    @cuda.jit
    def kernel(A, B, C, D, M, N, K, sam, sak, sbk, sbn, scm, scn, sdm, sdn,
               sa, sb, sc, sd, alpha, beta, grid_m, grid_n, extra):
        As = cuda.shared.array((BK, BM), acc_t)
        Bs = cuda.shared.array((BK, BN), acc_t)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tid = ty * 16 + tx
        bm = cuda.blockIdx.x % grid_m
        bn = cuda.blockIdx.x // grid_m
        m0 = bm * BM
        n0 = bn * BN
        batch = cuda.blockIdx.y
        ao = batch * sa
        bo = batch * sb
        acc = cuda.local.array((TM, TN), acc_t)
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = 0
        for k0 in range(0, K, BK):
            for it in range(BK * BM // 256):
                e = tid + it * 256
                kk = e // BM
                mm = e % BM
                m = m0 + mm
                k = k0 + kk
                As[kk, mm] = A[ao + m * sam + k * sak] if (m < M and k < K) else 0
                n = n0 + mm
                Bs[kk, mm] = B[bo + k * sbk + n * sbn] if (n < N and k < K) else 0
            cuda.syncthreads()
            for kk in range(BK):
                for i in range(TM):
                    a = As[kk, ty * TM + i]
                    for j in range(TN):
                        acc[i, j] += a * Bs[kk, tx * TN + j]
            cuda.syncthreads()
        for i in range(TM):
            m = m0 + ty * TM + i
            for j in range(TN):
                n = n0 + tx * TN + j
                if m < M and n < N:
                    v = alpha * acc[i, j]
                    if beta != 0:
                        v += beta * C[batch * sc + m * scm + n * scn]
                    D[batch * sd + m * sdm + n * sdn] = apply_epi(v, m, n, extra)

    kernel.nbk_smem_bytes = 0
    kernel.nbk_threads = THREADS
    return kernel
