"""How many blocks loop over the rows, and with how many staging buffers: the occupancy rule
of config.resident_blocks (numbers worked by hand from the CUDA occupancy calculator's rules
for sm_90) and plan_loop's choices. No GPU and no simulator needed; test_rows_gpu.py checks
resident_blocks against the driver's own occupancy query."""
from dataclasses import replace

import pytest

from nbkernels.errors import NbkernelsError
from nbkernels.rows.config import (RowConfig, SmLimits, choose, layout_mode, mixed_warps,
                                    narrow_per_thread, plan_loop, resident_blocks, shared_groups,
                                    with_chunks)
from nbkernels.rows.host import dram_gbps_per_sm

H200 = SmLimits()  # sm_90: 2048 threads, 32 blocks, 64 K registers, 228 KB per SM
A100 = SmLimits(smem=167936)  # sm_80: 164 KB per SM
MAX_SMEM = 232448  # the largest opt-in per block on sm_90 (227 KB)


@pytest.mark.parametrize("threads, regs, smem, lim, want, why", [
    (256, 64, 0, H200, 4, "2048 registers a warp, 8 warps a partition: 32 warps"),
    (256, 65, 0, H200, 3, "65 registers round to 72: 7 warps a partition"),
    (128, 32, 48 * 1024, H200, 4, "49152 + 1024 reserved: 4 fit in 233472"),
    (128, 32, 48 * 1024, A100, 3, "the same on 164 KB"),
    (1024, 32, 0, H200, 2, "threads"),
    (32, 16, 0, H200, 32, "the 32-block limit"),
    (512, 128, 0, H200, 1, "16 warps of 4096 registers"),
    (512, 129, 0, H200, 0, "does not fit at all"),
    (256, 32, 233000, H200, 0, "shared memory with the reserve exceeds the SM"),
    (256, 32, 46592 - 1024, H200, 5, "46592 = 364 x 128: 5 fit"),
    (256, 32, 46690 - 1024, H200, 4, "rounds up to 46720 (128-byte granule): 4, not 5"),
])
def test_resident_blocks(threads, regs, smem, lim, want, why):
    assert resident_blocks(threads, regs, smem, lim) == want, why


@pytest.mark.parametrize("threads, barriers, want", [
    (32, 1, 32), (32, 2, 32), (32, 3, 21), (64, 5, 12), (32, 6, 10), (128, 8, 8),
    (32, 12, 5), (32, 16, 4), (128, 16, 4), (128, 1, 16),
])
def test_resident_blocks_by_named_barriers(threads, barriers, want):
    """An SM's 64 named barriers shared out whole: the driver's occupancy query on the H200
    for kernels of 1-16 barriers (session 45, run D; tools/barrier_occupancy.py)."""
    assert resident_blocks(threads, 16, 0, H200, barriers) == want


def plan(cfg, items=8192, regs=62, static=128, row_bytes=64, vec_bytes=64, lim=H200,
         max_smem=MAX_SMEM, mode=None, fallback=None):
    return plan_loop(cfg, items, 132, lim, regs, static, row_bytes, vec_bytes, max_smem, mode,
                     4, fallback)


def test_plan_fills_every_sm_with_double_buffered_blocks():
    # rms_norm bf16 at n = 8192: 256 threads, 64 B of row and 64 B of weight a thread
    assert plan(RowConfig("block", 256)) == (4 * 132, 2, 256 * (2 * 64 + 64))


def test_plan_never_exceeds_the_ring_the_kernel_is_built_for():
    # layer_norm is built for 2 (nbk_max_buffers): a forced 4 gives 2
    cfg = RowConfig("block", 256, buffers=4)
    assert plan_loop(cfg, 8192, 132, H200, 116, 128, 64, 64, MAX_SMEM, None, 2)[1] == 2
    assert plan_loop(RowConfig("block", 256), 8192, 132, H200, 116, 128, 64, 64, MAX_SMEM, "4",
                     2)[1] == 2


def test_plan_takes_a_ring_of_four_only_when_asked():
    # measured no faster than two on the H200 (perf-notes r7): never picked by itself
    assert plan(RowConfig("block", 256), regs=116)[1] == 2
    assert plan(RowConfig("block", 256, buffers=4), regs=116) == (2 * 132, 4, 256 * 320)


def test_plan_never_launches_more_blocks_than_items():
    assert plan(RowConfig("block", 256), items=100) == (100, 2, 256 * 192)
    assert plan(RowConfig("block", 256), items=1)[0] == 1
    assert plan(RowConfig("warp", 32, 4), items=3)[0] == 3


def test_plan_one_buffer_where_two_leave_a_lone_block():
    # layer_norm f32, n = 8192, float32 weight and bias: two buffers take 128 KB (one block
    # per SM), one buffer 96 KB (two blocks)
    assert plan(RowConfig("block", 256), regs=96, row_bytes=128, vec_bytes=256) == \
        (2 * 132, 1, 256 * (128 + 256))


def test_plan_one_buffer_where_two_do_not_fit():
    # rms_norm + residual f32 at n = 16384: 512 threads of 2 x 128 B a buffer and 128 B of
    # weight: two buffers need 320 KB
    cfg = RowConfig("block", 512, buffers=2)
    assert plan(cfg, regs=88, row_bytes=256, vec_bytes=128) == (132, 1, 512 * 384)


def test_plan_modes_and_forced_configs():
    cfg = RowConfig("block", 256)
    assert plan(cfg, mode="0") == (8192, 1, 256 * 128)  # a block per row, as before the loop
    assert plan(cfg, mode="1") == (4 * 132, 1, 256 * 128)
    assert plan(cfg, mode="2") == (4 * 132, 2, 256 * 192)
    assert plan(cfg, mode="4") == (2 * 132, 4, 256 * 320)
    # 4 asked for where only 2 fit in a block: 2
    assert plan(cfg, mode="4", row_bytes=256, vec_bytes=64) == (132, 2, 256 * 576)
    assert plan(RowConfig("block", 256, blocks=3), mode="0") == (3, 2, 256 * 192)
    assert plan(RowConfig("block", 256, blocks=3, buffers=1)) == (3, 1, 256 * 128)


def test_plan_counts_registers():
    # 256 threads: 64 registers leave 4 blocks, 65 leave 3, 128 leave 2... shared memory
    # allowing 4 (48 KB + reserve, two buffers)
    assert [plan(RowConfig("block", 256), regs=r, mode="2")[0] for r in (64, 65, 96, 128)] == \
        [4 * 132, 3 * 132, 2 * 132, 2 * 132]


@pytest.mark.parametrize("kw", [{"buffers": 3}, {"blocks": -1}])
def test_row_config_rejects_bad_loop_fields(kw):
    with pytest.raises(NbkernelsError, match="buffers"):
        RowConfig("block", 64, **kw)


def test_with_chunks_keeps_loop_fields():
    cfg = with_chunks(RowConfig("split", 32, blocks=3, buffers=1), 2500)
    assert (cfg.chunks, cfg.blocks, cfg.buffers) == (3, 3, 1)


@pytest.mark.parametrize("n, rows, per_thread, want", [
    (8192, 8192, 32, ("block", 256, 1)),  # 256 x 32
    (8192, 8192, 64, ("block", 128, 1)),  # layer_norm's 16-bit kernels: 128 x 64
    (4096, 32768, 64, ("block", 64, 1)),
    (2048, 100, 64, ("warp", 32, 1)),  # a warp holds 2048
    (2049, 100, 64, ("block", 64, 1)),
    (40000, 1, 64, ("split", 256, 3)),  # one row: chunks of 256 x 64 = 16384
    (40000, 1, 32, ("split", 256, 5)),  # chunks of 8192
    # rows that fill no power of two of threads: the fewest whole warps (perf-notes r47)
    (5120, 16384, 32, ("block", 160, 1)),  # not 256, 96 of them idle
    (7168, 16384, 32, ("block", 224, 1)),
    (5000, 16384, 32, ("block", 160, 1)),  # 156 full threads, one partial, 3 idle
    (5120, 16384, 64, ("block", 96, 1)),  # 80 full, 16 idle (not 128: 48 idle)
    (3072, 100, 32, ("block", 96, 1)),
])
def test_choose_follows_the_kernels_elements_per_thread(n, rows, per_thread, want):
    cfg = choose(n, rows, 132, 512, per_thread)
    assert (cfg.variant, cfg.threads, cfg.chunks) == want
    assert cfg.per_thread == per_thread and cfg.capacity == cfg.threads * per_thread


def test_a_users_config_takes_the_kernels_elements_per_thread():
    # a block of 128 holds 4096 elements of a 32-a-thread kernel, 8192 of a 64-a-thread one
    with pytest.raises(NbkernelsError, match="holds 4096 elements per row, the rows have 8192"):
        with_chunks(RowConfig("block", 128), 8192, 32)
    assert with_chunks(RowConfig("block", 128), 8192, 64).capacity == 8192
    assert with_chunks(RowConfig("split", 32), 8192, 64).chunks == 4


@pytest.mark.parametrize("per_thread", [0, 2, 50, 68, 128])
def test_row_config_rejects_other_elements_per_thread(per_thread):
    with pytest.raises(NbkernelsError, match=f"per_thread: expected a multiple of 4 from 4 to "
                                             f"64, got {per_thread}"):
        RowConfig("block", 64, per_thread=per_thread)
    assert RowConfig("warp", 32, 4, per_thread=24).capacity == 768


# rows on a warp or a 64-thread block on as many whole slot groups a thread as they need and
# no warp split between full and masked threads (perf-notes r54-r56): (n, the op's elements a
# thread, slot group) -> elements a thread
@pytest.mark.parametrize("n, per_thread, slot, want", [
    (768, 64, 8, 24),  # 16-bit layer_norm: every lane 3 whole groups, not 3 of 8
    (768, 32, 8, 24),  # 16-bit softmax, rms_norm
    (768, 32, 4, 24),  # float32: 6 groups of 4
    (1024, 64, 8, 32), (1536, 64, 8, 48), (1792, 64, 8, 56), (2048, 64, 8, 64),
    (1000, 64, 8, 40),  # at 32, 29 lanes full beside 3 masked; at 40 all masked, 5 groups
    (1000, 32, 4, 32),  # at 32, 26 full and 6 masked: the op's own
    (1, 64, 8, 8), (1, 32, 4, 4), (256, 32, 8, 8), (257, 32, 8, 16), (129, 32, 4, 8),
    (100, 32, 4, 8),  # at 4, 25 lanes full and 7 masked
    (122, 64, 8, 16), (1024, 32, 4, 32),
    # 64 threads: 16-bit rows of 1025-2048 at 32 a thread, 2049-4096 at 64, float32 1025-2048
    (1536, 32, 8, 24), (1280, 32, 8, 24), (1025, 32, 8, 24), (1600, 32, 8, 32),
    (2048, 32, 8, 32), (1536, 32, 4, 24), (1280, 32, 4, 20), (3072, 64, 8, 48),
    (1100, 32, 4, 24),  # at 20, the first warp 19 full and 13 masked (r56)
    (3000, 64, 8, 56), (2500, 64, 8, 48), (4096, 64, 8, 64),
    (2049, 32, 8, 32), (4097, 64, 8, 64), (8192, 64, 8, 64),  # more threads: the op's own
])
def test_narrow_per_thread_takes_the_slot_groups_a_row_needs(n, per_thread, slot, want):
    p = narrow_per_thread(n, per_thread, slot)
    assert p == want
    assert p % slot == 0 and p <= per_thread
    before, after = choose(n, 1000, 132, 512, per_thread), choose(n, 1000, 132, 512, p)
    assert (after.variant, after.threads) == (before.variant, before.threads)  # same layout
    if p < per_thread:  # the fewest groups that cover the row and split no warp
        assert after.capacity >= n and not mixed_warps(n, after.threads, p, slot)
        assert all(mixed_warps(n, after.threads, q, slot)
                   for q in range(p - slot, 0, -slot) if after.threads * q >= n)


@pytest.mark.parametrize("n, threads, per_thread, slot, want", [
    (1100, 64, 20, 4, True),  # 275 groups: threads 0-18 full
    (1100, 64, 24, 4, False),  # none full
    (1280, 64, 24, 8, False),  # the first warp full, the second masked
    (768, 32, 24, 8, False), (1000, 32, 32, 8, True), (1000, 32, 64, 8, False),
])
def test_mixed_warps(n, threads, per_thread, slot, want):
    assert mixed_warps(n, threads, per_thread, slot) == want


# --- plans for another arch's SM (validate --as) ------------------------------------------

@pytest.mark.parametrize("target, smem, threads, blocks, reserved, granule", [
    ("sm_75", 65536, 1024, 16, 0, 256),
    ("sm_80", 167936, 2048, 32, 1024, 128),
    ("sm_86", 102400, 1536, 16, 1024, 128),
    ("sm_89", 102400, 1536, 24, 1024, 128),
    ("sm_90a", 233472, 2048, 32, 1024, 128),
])
def test_limits_capped_to_the_target_sm(target, smem, threads, blocks, reserved, granule):
    from nbkernels.rows import host

    got = host.capped(H200, target)
    assert (got.smem, got.threads, got.blocks, got.reserved_smem, got.smem_granule) == \
        (smem, threads, blocks, reserved, granule)
    # never above the GPU's own: an SM of 100 KB stays at 100 KB under an sm_80 target
    assert host.capped(SmLimits(smem=102400, threads=1536), "sm_80").smem == 102400
    assert host.capped(SmLimits(smem=102400, threads=1536), "sm_80").threads == 1536


def test_a_99_kb_block_plans_one_buffer_where_hopper_plans_two():
    # layer_norm f32 rows of 16384 (512 threads, 128 B of row and 8 B of vectors a thread,
    # 116 registers): two buffers fit an H200 block (131 KB + static) and an A100's 163 KB,
    # and an sm_86's 99 KB block takes one
    cfg = RowConfig("block", 512)
    h200 = plan_loop(cfg, 8192, 132, H200, 116, 128, 128, 8, MAX_SMEM, None, 2)
    sm86 = plan_loop(cfg, 8192, 132, SmLimits(threads=1536, blocks=16, smem=102400), 116, 128,
                     128, 8, 99 * 1024, None, 2)
    assert h200[1] == 2 and sm86[1] == 1


def test_the_row_plan_under_a_target_uses_its_block_limit():
    from nbkernels.rows import host
    from nbkernels.smem import device_limits

    sms, own = device_limits()  # the simulator's or no GPU's (an H200's 227 KB)
    with host.target_arch("sm_86"):
        assert device_limits() == (sms, min(own, 99 * 1024))
        with host.target_arch("sm_80"):
            assert device_limits() == (sms, min(own, 163 * 1024))
        assert device_limits() == (sms, min(own, 99 * 1024))
    assert device_limits() == (sms, own)


# peak DRAM bandwidth per SM as host.dram_gbps_per_sm computes it from the device attributes
H100_SXM = replace(H200, dram_gbps_per_sm=2 * 2619e6 * 5120 / 8 / 132 / 1e9)  # 25.4
H200_BW = replace(H200, dram_gbps_per_sm=2 * 3201e6 * 6144 / 8 / 132 / 1e9)  # 37.2


@pytest.mark.parametrize("cfg, lim, want, why", [
    (RowConfig("block", 64), H100_SXM, "0", "rows of 2048 on the H100: a block per row"),
    (RowConfig("block", 256), H100_SXM, "0", "rows of 8192"),
    (RowConfig("block", 512), H100_SXM, "pairs", "512 threads: two rows a block (r18, run H)"),
    (RowConfig("warp", 32, 4), H100_SXM, None, "warp rows: mixed, the kernel's default"),
    (RowConfig("split", 256, 1, 4), H100_SXM, None, "split rows do not loop"),
    (RowConfig("block", 256), H200_BW, "pairs", "the H200: two rows a block, in row order"),
    (RowConfig("block", 512), H200_BW, None, "512 threads: the kernel's default"),
    (RowConfig("block", 256), H200, None, "bandwidth unknown: the kernel's default"),
])
def test_layout_mode_by_bandwidth_per_sm(cfg, lim, want, why):
    assert layout_mode(cfg, lim) == want, why


def test_layout_mode_keeps_a_kernels_own_block_per_row_on_the_h200():
    # float32 rms_norm at rows of 4096 is a block per row by its own measurement (r18: 97.7%
    # against 95.0 for pairs); a looping default ("1", None) becomes pairs
    assert layout_mode(RowConfig("block", 128), H200_BW, "0") is None
    assert layout_mode(RowConfig("block", 256), H200_BW, "1") == "pairs"


def test_pairs_take_two_rows_a_block_with_two_buffers():
    # rms_norm bf16 at 8192 x 8192: 256 threads, 80 registers (3 blocks an SM either way)
    cfg = RowConfig("block", 256)
    assert plan(cfg, regs=80, mode="pairs") == (4096, 2, 256 * (2 * 64 + 64))
    assert plan(cfg, items=8191, regs=80, mode="pairs")[0] == 4096  # the last block: one row


def test_pairs_give_a_block_a_row_where_the_pairs_would_not_fill_the_gpu():
    # 3 blocks an SM x 132 SMs = 396 slots: 700 rows in pairs (350 blocks) would leave SMs idle
    assert plan(RowConfig("block", 256), items=700, regs=80, mode="pairs") == \
        (700, 1, 256 * (64 + 64))


def test_pairs_fall_back_where_the_second_buffer_costs_resident_blocks():
    # layer_norm f32 at 8192: 256 threads, 123 registers (2 blocks an SM by registers), 128 B of
    # row and 256 B of weight and bias a thread: two buffers (128 KB) fit one block an SM, one
    # buffer (96 KB) two. r18 measured pairs there 16 points below the loop (H200).
    cfg = RowConfig("block", 256)
    got = plan(cfg, regs=123, row_bytes=128, vec_bytes=256, mode="pairs", fallback=None)
    assert got == plan(cfg, regs=123, row_bytes=128, vec_bytes=256)
    assert got[1] == 1
    assert plan(cfg, regs=123, row_bytes=128, vec_bytes=256, mode="pairs", fallback="0") == \
        (8192, 1, 256 * (128 + 256))


def test_pairs_whatever_residency_where_the_kernel_measured_them_faster():
    # layer_norm f32 at 4096: 128 threads, 123 registers (4 blocks an SM by registers), 128 B
    # of row and 256 B of weight and bias a thread: one buffer fits 4 blocks, two fit 3. The
    # pairs moved 95% of copy there against the loop's 90% (H200, perf-notes r22).
    cfg = RowConfig("block", 128)
    kw = dict(items=32768, regs=123, row_bytes=128, vec_bytes=256, mode="pairs")
    assert plan(cfg, **kw)[:2] == (3 * 132, 2)  # the residency rule: the automatic loop
    assert plan_loop(cfg, 32768, 132, H200, 123, 128, 128, 256, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 2)) == (16384, 2, 128 * (2 * 128 + 256))
    # never where the second buffer would leave one block an SM (rows of 8192, 256 threads)
    wide = RowConfig("block", 256)
    assert plan_loop(wide, 8192, 132, H200, 123, 128, 128, 256, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 2))[1] == 1


def test_pairs_with_one_buffer_keep_a_block_per_rows_residency():
    # 16-bit layer_norm at 8192: 128 threads, 128 registers (4 blocks an SM), 128 B of row and
    # 256 B of weight and bias a thread: pairs of rows worked one after the other, one buffer,
    # 4 blocks (perf-notes r24: 85% of copy against the loop's 79%)
    cfg = RowConfig("block", 128)
    got = plan_loop(cfg, 8192, 132, H200, 128, 128, 128, 256, MAX_SMEM, "pairs", 2, None,
                    pairs_as=(2, 1))
    assert got == (4096, 1, 128 * (128 + 256))
    # too few rows to fill the GPU in pairs: a block per row
    assert plan_loop(cfg, 600, 132, H200, 128, 128, 128, 256, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 1)) == (600, 1, 128 * (128 + 256))
    # float32 layer_norm at 8192: 256 threads, 123 registers, 128 B of row and 256 B of
    # weight and bias a thread, blocks of four rows with one buffer: 2 blocks an SM (r25)
    assert plan_loop(RowConfig("block", 256), 8192, 132, H200, 123, 128, 128, 256, MAX_SMEM,
                     "pairs", 2, None, pairs_as=(4, 1)) == (2048, 1, 256 * (128 + 256))


@pytest.mark.parametrize("threads, regs, want", [
    # float32 layer_norm, 128 B of row and 256 B of weight and bias a thread (perf-notes r47):
    # rows of 8192 (256 threads: two buffers leave 1 block an SM) and of 5120 (160: 2 of 3)
    # in blocks of four rows with one buffer; rows of 7168 (224: 2 blocks either way) in the
    # rule's two rows of two buffers
    (256, 123, (2048, 1)), (160, 122, (2048, 1)), (224, 122, (4096, 2))])
def test_pairs_else_where_the_rules_pairs_cost_residency(threads, regs, want):
    got = plan_loop(RowConfig("block", threads), 8192, 132, H200, regs, 384, 128, 256, MAX_SMEM,
                    "pairs", 2, None, pairs_else=(4, 1))
    assert got[:2] == want


def test_row_groups_share_float32_vectors_where_that_keeps_more_resident():
    # 16-bit layer_norm at 8192 (128 threads, 128 registers: 4 blocks an SM, 128 B of row a
    # thread) with float32 weight and bias (512 B a thread, 64 KB a group): alone, 2 groups an
    # SM (80 KB each); two groups a block sharing one copy (96 KB), the 4 the registers allow
    cfg = RowConfig("block", 128)
    assert shared_groups(cfg, H200, 128, 128, 128, 512, MAX_SMEM) == 2
    assert shared_groups(cfg, H200, 128, 128, 128, 384, MAX_SMEM) == 2  # a float32 bias: 3 -> 4
    assert shared_groups(cfg, H200, 128, 128, 128, 256, MAX_SMEM) == 1  # 16-bit: 4 either way
    # rows of 4096 (64 threads, 32 KB of vectors a group): 5 alone; 8 in blocks of 2 or of 4,
    # the fewest a block taken
    assert shared_groups(RowConfig("block", 64), H200, 128, 128, 128, 512, MAX_SMEM) == 2
    assert shared_groups(RowConfig("warp", 32, 4), H200, 128, 128, 128, 512, MAX_SMEM) == 1
    # pairs of two groups a block: 4 rows a block, one buffer a group, one copy of the vectors
    assert plan_loop(cfg, 8192, 132, H200, 128, 128, 128, 512, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 1), shared=True, groups=2) == (2048, 1, 256 * 128 + 128 * 512)
    assert plan_loop(cfg, 8191, 132, H200, 128, 128, 128, 512, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 1), shared=True, groups=2)[0] == 2048  # the last: 3 rows
    # a block per pair of rows where pairs of pairs would not fill the GPU; the automatic loop
    assert plan_loop(cfg, 600, 132, H200, 128, 128, 128, 512, MAX_SMEM, "pairs", 2, None,
                     pairs_as=(2, 1), shared=True, groups=2) == (300, 1, 256 * 128 + 128 * 512)
    assert plan_loop(cfg, 8192, 132, H200, 128, 128, 128, 512, MAX_SMEM, None, 2, None,
                     shared=True, groups=2) == (2 * 132, 1, 256 * 128 + 128 * 512)
    # the warp layout's 4 groups a block share one copy too
    assert plan_loop(RowConfig("warp", 32, 4), 8192, 132, H200, 64, 128, 128, 512, MAX_SMEM,
                     "1", 2, None, shared=True)[2] == 128 * 128 + 32 * 512
    # the shared build's 16 named barriers (ids computed at run time) hold 4 blocks an SM
    # where shared memory alone would allow 6
    warp = (RowConfig("warp", 32, 4), 8192, 132, H200, 64, 128, 128, 512, MAX_SMEM, "1", 2, None)
    assert plan_loop(*warp, shared=True)[0] == 6 * 132
    assert plan_loop(*warp, shared=True, barriers=16)[0] == 4 * 132
    assert shared_groups(RowConfig("block", 64), H200, 128, 128, 128, 512, MAX_SMEM,
                         barriers=16) == 2  # rows of 4096: 4 groups alone, 8 in pairs


def test_layer_norm_shares_vectors_only_in_float32_beside_16_bits():
    from nbkernels.rows.layer_norm_kernel import build
    assert build("bf16", "f32", "f32", True, True, True).nbk_vec_shared
    assert build("f16", "f32", "f32", True, True, True).nbk_vec_shared
    assert build("bf16", "f32", "bf16", True, True, False).nbk_vec_shared  # no bias
    assert not build("f16", "f16", "f32", True, True, True).nbk_vec_shared  # a 16-bit weight
    assert not build("bf16", "f32", "f32", True, False, False).nbk_vec_shared
    assert not build("bf16", "bf16", "bf16", True, True, True).nbk_vec_shared
    # what the planner counts: the shared build's run-time barrier ids take all 16
    assert build("bf16", "f32", "f32", True, True, True).nbk_barriers == 16
    assert build("bf16", "bf16", "bf16", True, True, True).nbk_barriers == 1
    assert not build("f32", "f32", "f32", True, True, True).nbk_vec_shared
    assert not build("f16", "f32", "f32", False, True, True).nbk_vec_shared  # Turing


def test_layer_norm_pairs_by_block_size():
    from nbkernels.rows import host
    from nbkernels.rows.layer_norm_kernel import build
    f32 = build("f32", "f32", "f32", True, True, True)
    bf16 = build("bf16", "bf16", "bf16", True, True, True)
    turing = build("f16", "f16", "f16", False, True, True)
    assert host.pairs_as(f32, RowConfig("block", 128)) == (2, 2)
    assert host.pairs_as(f32, RowConfig("block", 256)) is None  # the rule's, else (4, 1):
    assert host.pairs_else(f32, RowConfig("block", 256)) == (4, 1)
    assert host.pairs_else(f32, RowConfig("block", 160)) == (4, 1)
    assert host.pairs_as(f32, RowConfig("block", 512)) is None
    assert host.pairs_as(f32, RowConfig("warp", 32, 4)) is None
    assert host.pairs_as(bf16, RowConfig("block", 64)) == (2, 1)
    assert host.pairs_as(bf16, RowConfig("block", 128)) == (2, 1)
    assert host.pairs_as(bf16, RowConfig("block", 256)) is None
    assert host.pairs_as(turing, RowConfig("block", 128)) is None


def test_pairs_need_a_kernel_built_for_two_buffers():
    cfg = RowConfig("block", 256)
    assert plan_loop(cfg, 8192, 132, H200, 80, 128, 64, 64, MAX_SMEM, "pairs", 1, "0") == \
        (8192, 1, 256 * (64 + 64))


def test_dram_bandwidth_per_sm_from_device_attributes():
    class Dev:  # what numba's Device answers on an H100 SXM
        MEMORY_CLOCK_RATE, GLOBAL_MEMORY_BUS_WIDTH, MULTIPROCESSOR_COUNT = 2619000, 5120, 132

    assert dram_gbps_per_sm(Dev()) == pytest.approx(25.4, abs=0.05)
    Dev.MEMORY_CLOCK_RATE = 0  # a driver that does not report it
    assert dram_gbps_per_sm(Dev()) == 0.0


def test_rms_norm_wide_build_by_row_length_and_dram(monkeypatch):
    """16-bit rms_norm takes its 64-element build for rows of 4097-8192 where DRAM gives an SM
    more than 30 GB/s (the H200, perf-notes r27), or where a config asks for it; its layout
    there is a block per row, and the 32-element build's rows of 4096 go in one-buffer pairs."""
    from nbkernels.rows import host, rms_norm_kernel as R

    gbps = {"v": 37.1}  # the H200's 4.9 TB/s over 132 SMs
    monkeypatch.setattr(host, "sm_limits", lambda: SmLimits(dram_gbps_per_sm=gbps["v"]))
    monkeypatch.delenv("NBKERNELS_ROW_VARIANT", raising=False)
    assert [R.wide(n, None) for n in (4096, 4097, 8192, 8193)] == [False, True, True, False]
    gbps["v"] = 25.4  # the H100
    assert not R.wide(8192, None)
    assert R.wide(3000, RowConfig("block", 64, per_thread=64))
    assert not R.wide(8192, RowConfig("block", 256))
    gbps["v"] = 37.1
    monkeypatch.setenv("NBKERNELS_ROW_VARIANT", "block")  # a forced layout keeps the default
    assert not R.wide(8192, None)
    wide, narrow = R.build("bf16", "bf16", True, False, 64), R.build("bf16", "bf16", True, False)
    assert wide.nbk_per_thread == 64 and narrow.nbk_per_thread == 32
    assert layout_mode(RowConfig("block", 128), SmLimits(dram_gbps_per_sm=37.1),
                       wide.nbk_loop_by_threads.get(128)) is None  # its own: "0"
    assert wide.nbk_loop_by_threads == {128: "0"}
    assert host.pairs_as(narrow, RowConfig("block", 128)) == (2, 1)
    assert host.pairs_as(R.build("bf16", "bf16", True, True), RowConfig("block", 128)) is None
    for args in (("f32", "f32", True, False), ("bf16", "bf16", True, True),
                 ("bf16", "bf16", False, False)):
        with pytest.raises(ValueError, match="64 elements a thread needs 16-bit rows"):
            R.build(*args, 64)


# --- the register-row layout (perf-notes r43) --------------------------------------------------
@pytest.mark.parametrize("n,threads,per_thread", [
    # rows that fill whole warps of threads: 32 elements a thread where they can (perf-notes
    # r50), else 64 (past 512 threads of 32)
    (2048, 64, 32), (4096, 128, 32), (6144, 192, 32), (8192, 256, 32), (16384, 512, 32),
    (32768, 512, 64), (3072, 96, 32), (5120, 160, 32), (7168, 224, 32),
    # others: the fewest whole warps covering the row at the build leaving fewer element
    # slots past its end (perf-notes r47): 5000 on 160 x 32 (120 slots), not 96 x 64 (1144);
    # 8000 on 256 x 32 (192 slots, as 128 x 64: the first choice on a tie)
    (5000, 160, 32), (8000, 256, 32), (1, 32, 32), (2049, 96, 32), (4097, 160, 32),
    (8193, 288, 32), (20000, 320, 64), (40000, 512, 64)])
def test_regs_config_fills_whole_warps_where_the_row_can(n, threads, per_thread):
    from nbkernels.rows.config import regs_config

    cfg = regs_config(n)
    assert (cfg.variant, cfg.threads, cfg.per_thread, cfg.grid(7)) == \
        ("regs", threads, per_thread, 7)


def test_regs_config_with_one_build():
    from nbkernels.rows.config import regs_config

    assert (regs_config(5120, (64,)).threads, regs_config(8192, (32,)).threads) == (96, 256)
    # the order of the choices breaks a tie: 8192 fills 128 x 64 and 256 x 32 alike
    assert regs_config(8192, (64, 32)).threads == 128


def test_a_forced_regs_layout_longer_than_its_block_holds_is_refused():
    from nbkernels.rows.config import regs_config

    with pytest.raises(NbkernelsError, match="holds 32768 elements per row, the rows have 40000"):
        with_chunks(regs_config(40000), 40000)


H200_DRAM, H100_DRAM = 4800 / 132, 3350 / 132  # GB/s an SM


@pytest.mark.parametrize("n,built,dram,env,want", [
    (8192, True, H200_DRAM, {}, True),
    (4097, True, H200_DRAM, {}, True),
    (4096, True, H200_DRAM, {}, True),  # rows of 2049-4096 since session 49 (perf-notes r51)
    (2049, True, H200_DRAM, {}, True),
    (2048, True, H200_DRAM, {}, False),  # the staged layouts (unmeasured in registers)
    (8193, True, H200_DRAM, {}, False),
    (8192, False, H200_DRAM, {}, False),  # float32, Turing, rms_norm with a residual
    (8192, True, H100_DRAM, {}, False),  # the H100: unmeasured
    (8192, True, 0.0, {}, False),  # bandwidth unknown
    (8192, True, H200_DRAM, {"NBKERNELS_ROWS_LOOP": "pairs"}, False),  # a loop forced
    (8192, True, H200_DRAM, {"NBKERNELS_ROW_VARIANT": "block"}, False),
    (100, True, H100_DRAM, {"NBKERNELS_ROW_VARIANT": "regs"}, True),  # forced anywhere
])
def test_regs_layout_is_taken_where_it_was_measured_faster(monkeypatch, n, built, dram, env,
                                                          want):
    import types

    from nbkernels.rows import host

    for k in ("NBKERNELS_ROWS_LOOP", "NBKERNELS_ROW_VARIANT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(host, "sm_limits", lambda: SmLimits(dram_gbps_per_sm=dram))
    call = types.SimpleNamespace(sim=False)
    rows = types.SimpleNamespace(n=n)
    assert host.wants_regs(call, rows, None, built) is want
    # lengths outside the op's own range (rms_norm's, which measured its staged layouts
    # faster at some): not taken by themselves, forced still
    assert host.wants_regs(call, rows, None, built, auto_rows=(n + 1, n + 2)) is \
        (env.get("NBKERNELS_ROW_VARIANT") == "regs")
    # an op's own range replaces the default one: rows of n taken where it holds n alone
    if not env and built and dram == H200_DRAM:
        assert host.wants_regs(call, rows, None, built, auto_rows=(n, n)) is True
    # a config decides alone: regs or not, whatever the GPU
    assert host.wants_regs(call, rows, RowConfig("regs", 128), False) is True
    assert host.wants_regs(call, rows, RowConfig("block", 128), built) is False


@pytest.mark.parametrize("threads, want", [(32, None), (64, "a"), (96, "b"), (128, "b"),
                                           (160, "c"), (224, "c"), (256, "c"), (288, None),
                                           (512, None)])
def test_a_block_of_whole_warps_takes_its_row_ranges_entry(threads, want):
    # the loop and pairs tables were measured at powers of two, each standing for its rows
    # (perf-notes r47): 160 threads (rows of 5120) take 256's entry, 96 take 128's
    from nbkernels.rows.config import by_block_size

    assert by_block_size({64: "a", 128: "b", 256: "c"}, threads) == want
    assert by_block_size({256: "c"}, threads) == (want if threads > 128 else None)


@pytest.mark.parametrize("sizes", ["8x8x8", "0x5", "ax4", "", "8192"])
def test_row_bench_refuses_sizes_that_are_not_rows_by_n(sizes, capsys):
    from nbkernels.rows import bench

    with pytest.raises(SystemExit):
        bench.main(["--sizes", sizes])
    assert "--sizes: expected rows x n pairs" in capsys.readouterr().err


# softmax's lanes layout (perf-notes r63): (n, slot, lanes a row, rows a block, elements a lane)
@pytest.mark.parametrize("n, slot, want", [
    (1, 8, (8, 16, 8)),  # one group on 8 lanes, 7 of them past the row
    (64, 8, (8, 16, 8)),
    (200, 8, (8, 16, 32)),  # 25 groups on 8 lanes of 4 (run C: 88% of copy, 16 lanes 85)
    (204, 8, (8, 16, 32)),  # 197 shifted: planned n + 7
    (256, 8, (8, 16, 32)),
    (504, 8, (16, 8, 32)),  # 63 groups: 16 lanes of 4
    (507, 8, (32, 4, 16)),  # 64 groups (500 shifted): 32 lanes of 2 (79.5 against 73.9)
    (768, 8, (32, 4, 24)),
    (1024, 8, (32, 4, 32)),
    (200, 4, (16, 8, 16)),  # float32: 50 groups on 16 lanes of 4 (95 against 8 of 7's 94)
    (252, 4, (16, 8, 16)),
    (256, 4, (32, 4, 8)),  # 64 groups: 32 lanes (93.5 against 16 lanes' 91.8)
    (1000, 4, (32, 4, 32)),  # 8 groups a lane where 32 lanes of 4 would not hold the row
    (1024, 4, (32, 4, 32)),
])
def test_lanes_config_fits_the_lanes_and_groups_to_the_row(n, slot, want):
    from nbkernels.rows.config import lanes_config

    cfg = lanes_config(n, slot)
    assert (cfg.variant, cfg.threads, cfg.rows_per_block, cfg.per_thread) == ("lanes",) + want
    assert cfg.capacity >= n and cfg.threads * cfg.rows_per_block == 128
    assert cfg.per_thread % slot == 0


def test_lanes_config_ends_where_32_lanes_of_the_build_end():
    from nbkernels.rows.config import lanes_config

    assert lanes_config(1025, 4) is None and lanes_config(1025, 8) is None
    assert lanes_config(2048, 8, per_thread=64).per_thread == 64  # a wider build's limit


@pytest.mark.parametrize("threads, rows", [(4, 8), (24, 4), (64, 2), (8, 3), (16, 1), (32, 17)])
def test_row_config_refuses_lanes_it_has_no_build_for(threads, rows):
    with pytest.raises(NbkernelsError, match=f"lanes variant takes \\(8, 16, 32\\) threads per "
                                             f"row .* got threads={threads}, rows_per_block="
                                             f"{rows}"):
        RowConfig("lanes", threads, rows)


def test_a_forced_lanes_layout_says_what_it_holds():
    cfg = RowConfig("lanes", 8, 16)
    assert cfg.describe() == "8 lanes per row, 16 rows per block, the rows held in registers"
    assert cfg.grid(33) == 3
    with pytest.raises(NbkernelsError, match="a lanes layout of 8 threads holds 256 elements "
                                             "per row, the rows have 257"):
        with_chunks(cfg, 257, 32)
    assert with_chunks(cfg, 256, 32) == cfg


@pytest.mark.parametrize("n, sim, env, cfg, want", [
    (1024, False, {}, None, True),
    (1, False, {}, None, True),
    (1025, False, {}, None, False),  # the warp or block layouts
    (200, True, {}, None, False),  # the simulator's default path stays the staged layouts
    (200, False, {"NBKERNELS_ROWS_LOOP": "2"}, None, False),  # a loop forced
    (200, False, {"NBKERNELS_ROW_VARIANT": "warp"}, None, False),
    (5000, True, {"NBKERNELS_ROW_VARIANT": "lanes"}, None, True),  # forced (then refused)
    (200, False, {}, RowConfig("warp", 32, 4), False),  # a config decides alone
    (5000, True, {}, RowConfig("lanes", 32, 4), True),
])
def test_lanes_layout_is_taken_for_short_rows(monkeypatch, n, sim, env, cfg, want):
    import types

    from nbkernels.rows import host

    for k in ("NBKERNELS_ROWS_LOOP", "NBKERNELS_ROW_VARIANT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert host.wants_lanes(types.SimpleNamespace(sim=sim), types.SimpleNamespace(n=n), cfg) \
        is want


@pytest.mark.parametrize("n, slot, want", [
    (200, 8, (16, 16)),  # rms_norm's 16-bit rows of 200: 16 lanes of 2 (r63 run F: 89.3 / 85.7)
    (64, 8, (8, 8)),
    (200, 4, (32, 8)),  # float32: 32 lanes of 2
    (64, 4, (8, 8)),
    (768, 8, (32, 24)),  # rows that need 32 lanes: as softmax's
])
def test_lanes_config_takes_an_ops_own_group_limit(n, slot, want):
    from nbkernels.rows.config import lanes_config
    from nbkernels.rows.rms_norm_kernel import LANES_GROUPS

    cfg = lanes_config(n, slot, groups_max=LANES_GROUPS)
    assert (cfg.threads, cfg.per_thread) == want and cfg.capacity >= n
