"""Typed inline-PTX instructions for numba.cuda kernels.

Every name here is generated from a declarative :class:`InstructionSpec`; see
``docs/intrinsics.md`` for the table of instructions, fragment layouts and archs,
and ``docs/extending.md`` for :func:`define`.
"""
from .convert import (
    bits_to_f32,
    cvt_f32_to_bf16,
    cvt_f32_to_f16,
    f16_bits_to_f32,
    f32_to_bits,
    f32_to_tf32,
    pack_bf16x2,
    pack_f16x2,
)
from .cp_async import (
    cp_async_ca,
    cp_async_cg,
    cp_async_cg_pf256,
    cp_async_commit_group,
    cp_async_wait_all,
    cp_async_wait_group,
)
from .define import define
from .descriptors import SWIZZLE_128B, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_NONE, smem_desc
from .factory import REGISTRY, PtxIntrinsic
from .hopper import (
    barrier_cluster_arrive,
    barrier_cluster_arrive_relaxed,
    barrier_cluster_wait,
    cluster_ctarank,
    cluster_nctarank,
    elect_sync,
    fence_mbarrier_init,
    fence_proxy_async,
    mapa_shared_cluster,
    setmaxnreg_dec,
    setmaxnreg_inc,
    st_shared_cluster_f32,
    stmatrix_x1,
    stmatrix_x1_trans,
    stmatrix_x2,
    stmatrix_x2_trans,
    stmatrix_x4,
    stmatrix_x4_trans,
)
from .ldmatrix import (
    ldmatrix_x1,
    ldmatrix_x1_trans,
    ldmatrix_x2,
    ldmatrix_x2_trans,
    ldmatrix_x4,
    ldmatrix_x4_trans,
)
from .mbarrier import (
    mbarrier_arrive,
    mbarrier_arrive_cluster,
    mbarrier_arrive_expect_tx,
    mbarrier_expect_tx,
    mbarrier_init,
    mbarrier_try_wait_parity,
)
from .memory import (
    fence_acq_rel_gpu,
    gmem_addr,
    ld_acquire_gpu_s64,
    st_release_gpu_s64,
    ld_global_f32,
    ld_global_f32_if,
    ld_global_s32_if,
    ld_global_u16_if,
    ld_global_u32_if,
    st_global_f32_if,
    st_global_s32_if,
    st_global_u16_if,
    st_global_u32_if,
    ld_global_f64,
    ld_global_s32,
    ld_global_u16,
    ld_global_u32,
    ld_global_v4,
    ld_shared_f64,
    ld_shared_v4,
    smem_addr,
    st_global_cs_v4_if,
    st_global_f32,
    st_global_f64,
    st_global_s32,
    st_global_u16,
    st_global_u32,
    st_global_v4,
    st_global_v4_if,
    st_shared_v4,
)
from .mma import (
    mma_m8n8k4_f64,
    mma_m16n8k4_f64,
    mma_m16n8k8_f64,
    mma_m16n8k16_f64,
    mma_m16n8k8_f16_f16,
    mma_m16n8k8_f16_f32,
    mma_m16n8k8_tf32_f32,
    mma_m16n8k16_bf16_f32,
    mma_m16n8k16_f16_f16,
    mma_m16n8k16_f16_f32,
    mma_m16n8k32_s8_s32,
    mma_m16n8k32_u8_s32,
)
from .spec import Const, Element, InstructionSpec, Operand, ShapeVar
from .tma import (
    bulk_commit_group,
    bulk_load,
    bulk_store,
    bulk_wait_group,
    bulk_wait_group_read,
    fence_proxy_tensormap_acquire,
    prefetch_tensormap,
    tma_load_2d,
    tma_load_2d_multicast,
    tma_load_3d,
    tma_load_3d_multicast,
    tma_store_2d,
    tma_store_3d,
)
from .warp import bar_sync, broadcast_lane0_u32, shfl_bfly_f32, shfl_bfly_u32, vote_any, warp_sync
from .wgmma import *  # noqa: E402,F403 - 27 generated wgmma names, listed in wgmma.__all__

#: The instructions nbkernels ships (user definitions are added to REGISTRY, not here).
SHIPPED = tuple(sorted(REGISTRY))

__all__ = list(SHIPPED) + [
    "define", "InstructionSpec", "Operand", "Element", "Const", "ShapeVar", "PtxIntrinsic",
    "REGISTRY", "SHIPPED", "smem_desc", "SWIZZLE_NONE", "SWIZZLE_128B", "SWIZZLE_64B",
    "SWIZZLE_32B",
]
