"""Does a copy through the TMA unit (1-D bulk copies) move more than a copy through the SM's
load path? Measurement for perf-notes r39 (H200): the row kernels stage rows with per-thread
``cp.async`` (LDGSTS) and store with STG; a bulk copy moves a whole chunk per instruction,
outside the L1's request tracking.

Variants, each copying the same bytes src -> dst (dst poisoned first, checked after):
  cupy        ``dst[...] = src`` (the device-to-device copy the issue's bar is set by)
  bulk        one thread a block: bulk_load into a ring of stages, bulk_store out of it
  bulk_stg    bulk_load into the ring, the block's 128 threads read it back (LDS.128) and
              store with STG.128 (the form a row kernel would take: its output goes through
              registers)
  cpasync     128 threads: cp.async (LDGSTS) 16 B each into the ring, LDS.128, STG.128 (the
              row kernels' data path today)
  ldg         128 threads: U loads of 16 B each (LDG.128) into registers, then U stores; a
              block per tile, or a persistent grid
  ldgT        the same, a block per tile, with other thread counts: tiles of 8-16 KB by more
              threads, tiles of 1-4 KB by threads of 2-8 loads
  coupled     a block per tile whose loads and stores a barrier splits, as a row reduction does:
              none, the block's, or a cluster's (2-4 CTAs, launched by runner.launch_jit)
``python tools/bulk_copy_bw.py [--mib 1024,256]``; ``--sim`` checks every variant on a small
copy in numba's simulator (no GPU).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

if "--sim" in sys.argv:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

from numba import cuda, float32, int64, types, uint32, uint64  # noqa: E402

import nbkernels  # noqa: E402
from nbkernels import intrinsics as I  # noqa: E402
from nbkernels.rows.device import MAX_WARPS, group_sum  # noqa: E402

MAX_STAGES = 16
THREADS = 128


def _dev(fn):
    return cuda.jit(device=True, inline="always")(fn)


@_dev
def ring_base(sh, src, dst):
    """(the ring's 128-aligned shared address, src's and dst's global addresses, the grid, this
    block): what every ring copy starts from."""
    pad = (128 - I.smem_addr(sh, 0) % 128) % 128
    return (int64(I.smem_addr(sh, 0) + pad), int64(I.gmem_addr(src, 0)),
            int64(I.gmem_addr(dst, 0)), int64(cuda.gridDim.x), int64(cuda.blockIdx.x))


@_dev
def bulk_fill(bars, s, base, sa, c, chunk):
    """Stage ``s`` takes chunk ``c`` by one bulk load, its bytes announced on the stage's
    barrier."""
    bar = I.smem_addr(bars, s)
    I.mbarrier_arrive_expect_tx(bar, uint32(chunk))
    I.bulk_load(uint32(base + s * chunk), uint64(sa + c * chunk), uint32(chunk), bar)


@_dev
def bulk_ring_start(bars, S, base, sa, G, b, nchunks, chunk):
    """The stages' barriers initialised (thread 0), then thread 0 fills the ring with the
    block's first ``S`` chunks."""
    t = cuda.threadIdx.x
    if t == 0:
        for s in range(S):
            I.mbarrier_init(I.smem_addr(bars, s), 1)
        I.fence_proxy_async()
    cuda.syncthreads()
    if t == 0:
        for s in range(S):
            if b + s * G < nchunks:
                bulk_fill(bars, s, base, sa, b + s * G, chunk)


@_dev
def bulk_wait(bars, S, k):
    """Wait for iteration ``k``'s stage to be full."""
    bar = I.smem_addr(bars, k % S)
    while not I.mbarrier_try_wait_parity(bar, uint32((k // S) & 1)):
        pass


@cuda.jit
def bulk_copy(src, dst, nchunks, chunk, S):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array(MAX_STAGES, np.uint64)
    base, sa, da, G, b = ring_base(sh, src, dst)
    bulk_ring_start(bars, S, base, sa, G, b, nchunks, chunk)
    if cuda.threadIdx.x != 0:
        return
    k, c, cp = int64(0), b, int64(0)
    while c < nchunks:
        bulk_wait(bars, S, k)
        I.bulk_store(uint64(da + c * chunk), uint32(base + (k % S) * chunk), uint32(chunk))
        I.bulk_commit_group()
        if k >= 1:  # the previous stage, once its store has read it, takes its next chunk
            cn = cp + S * G
            if cn < nchunks:
                I.bulk_wait_group_read(1)
                bulk_fill(bars, (k - 1) % S, base, sa, cn, chunk)
        cp = c
        c += G
        k += 1
    I.bulk_wait_group(0)


@cuda.jit
def bulk_stg_copy(src, dst, nchunks, chunk, S):
    sh = cuda.shared.array(0, np.uint8)
    bars = cuda.shared.array(MAX_STAGES, np.uint64)
    t = int64(cuda.threadIdx.x)
    base, sa, da, G, b = ring_base(sh, src, dst)
    bulk_ring_start(bars, S, base, sa, G, b, nchunks, chunk)
    k, c = int64(0), b
    while c < nchunks:
        s = k % S
        bulk_wait(bars, S, k)
        for i in range(t * 16, chunk, THREADS * 16):
            v = I.ld_shared_v4(uint32(base + s * chunk + i))
            I.st_global_v4(uint64(da + c * chunk + i), v)
        cuda.syncthreads()  # every thread has read stage s: it may be refilled
        if t == 0 and c + S * G < nchunks:
            bulk_fill(bars, s, base, sa, c + S * G, chunk)
        c += G
        k += 1


def make_cpasync(S):
    """The cp.async copy with ``S`` stages as a constant (cp.async.wait_group takes a literal)."""
    WAIT = S - 1

    @cuda.jit
    def cpasync_copy(src, dst, nchunks, chunk, stages):
        sh = cuda.shared.array(0, np.uint8)
        t = int64(cuda.threadIdx.x)
        base, sa, da, G, b = ring_base(sh, src, dst)
        for s in range(S - 1):  # S - 1 chunks in flight ahead of the one being stored
            c = b + s * G
            if c < nchunks:
                for i in range(t * 16, chunk, THREADS * 16):
                    I.cp_async_cg(uint32(base + s * chunk + i), uint64(sa + c * chunk + i), 16, 16)
            I.cp_async_commit_group()
        k, c = int64(0), b
        while c < nchunks:
            cn = c + (S - 1) * G  # into the stage the previous iteration emptied
            sn = (k + S - 1) % S
            if cn < nchunks:
                for i in range(t * 16, chunk, THREADS * 16):
                    I.cp_async_cg(uint32(base + sn * chunk + i), uint64(sa + cn * chunk + i),
                                  16, 16)
            I.cp_async_commit_group()
            I.cp_async_wait_group(WAIT)  # this iteration's chunk has landed (this thread's part)
            s = k % S
            for i in range(t * 16, chunk, THREADS * 16):  # each thread reads back its own bytes
                v = I.ld_shared_v4(uint32(base + s * chunk + i))
                I.st_global_v4(uint64(da + c * chunk + i), v)
            c += G
            k += 1
        I.cp_async_wait_all()

    return cpasync_copy


CPASYNC = {S: make_cpasync(S) for S in (2, 3, 4)}


def make_ldg(U, T=THREADS, couple=0, cluster=1):
    """A copy through registers, no shared memory: each of ``T`` threads loads ``U`` 16-byte
    pieces (LDG.128, ``T`` x 16 B apart) of its block's tile and stores them (STG.128); blocks
    walk tiles ``step`` apart (``step`` = the grid: one tile a block where it covers them all).
    ``couple`` splits each tile's loads from its stores by a barrier, the way a row reduction
    does: 0 none, 1 the block's, 2 the cluster's (arrive + wait: every CTA of the cluster has
    loaded before any stores; a cluster of ``cluster`` CTAs is then one "row" of ``cluster``
    tiles, and every CTA must walk as many tiles: a grid of one tile a block); 3 a row
    reduction's: the threads' sums of their words' low bytes (float32) summed over the block
    (rows.device.group_sum, as the row kernels) and, in a cluster, sent to every
    other CTA through distributed shared memory before one cluster barrier; the stores wait
    on the total (a branch on it that is never taken)."""
    NW = 4 * U

    @cuda.jit
    def ldg_copy(src, dst, ntiles, tile, step):
        red = cuda.shared.array((2, MAX_WARPS), float32)
        got = cuda.shared.array(4, float32)  # a slot per cluster rank
        t = int64(cuda.threadIdx.x)
        sa, da = int64(I.gmem_addr(src, 0)), int64(I.gmem_addr(dst, 0))
        b = int64(cuda.blockIdx.x)
        w = cuda.local.array(NW, np.uint32)
        while b < ntiles:
            off = b * tile + t * 16
            for u in range(U):
                v = I.ld_global_v4(uint64(sa + off + u * T * 16))
                for j in range(4):
                    w[4 * u + j] = v[j]
            if couple == 1:
                cuda.syncthreads()
            elif couple == 2:
                I.barrier_cluster_arrive()
                I.barrier_cluster_wait()
            elif couple == 3:
                s = float32(0)
                for j in range(NW):
                    s += float32(w[j] & 0xFF)
                s = group_sum(s, T, red, 0)  # the row kernels' block reduction
                if cluster > 1:
                    me = I.cluster_ctarank()
                    if t < cluster:  # thread r sends this CTA's sum to rank r's slot `me`
                        I.st_shared_cluster_f32(
                            I.mapa_shared_cluster(I.smem_addr(got, me), uint32(t)), s)
                    I.barrier_cluster_arrive()
                    I.barrier_cluster_wait()
                    s = float32(0)
                    for k in range(cluster):
                        s += got[k]
                if s < float32(0):  # never: the stores depend on the total
                    w[0] = ~w[0]
            for u in range(U):
                I.st_global_v4(uint64(da + off + u * T * 16),
                               (w[4 * u], w[4 * u + 1], w[4 * u + 2], w[4 * u + 3]))
            b += step

    if cluster > 1:
        ldg_copy.nbk_cluster = (cluster, 1, 1)  # launched by runner.launch_jit
    return ldg_copy


LDG = {U: make_ldg(U) for U in (1, 2, 4, 8)}
# the same tile sizes by threads instead of loads a thread, and small tiles of deep threads:
# (U, threads) keys, the variant "ldgT"
LDG_T = {(1, 512): make_ldg(1, 512), (1, 1024): make_ldg(1, 1024), (4, 32): make_ldg(4, 32),
         (2, 64): make_ldg(2, 64), (8, 32): make_ldg(8, 32)}


#: (U, threads, coupling, cluster): 4 KB tiles free, tied by their block, tied four or two to a
#: 16 or 8 KB cluster "row"; 16 KB tiles of one block tied by its barrier (a 16-bit row of 8192
#: as the row kernels hold it) and 8 KB tiles in clusters of two (the same 16 KB over 2 CTAs)
COUPLED = {key: make_ldg(*key) for key in [
    (2, 128, 0, 1), (2, 128, 1, 1), (2, 128, 2, 4), (2, 128, 2, 2), (8, 128, 1, 1),
    (1, 1024, 1, 1), (4, 128, 2, 2),
    # a row reduction's coupling (3): 16 KB of one block (128 or 256 threads) against the
    # same 16 KB over two CTAs (the sums met through distributed shared memory), or four
    (8, 128, 3, 1), (4, 256, 3, 1), (4, 128, 3, 2), (2, 256, 3, 2), (2, 128, 3, 4)]}


SIG = (types.uint8[::1], types.uint8[::1], types.int64, types.int64, types.int64)
KERNELS = {"bulk": (bulk_copy, 32), "bulk_stg": (bulk_stg_copy, THREADS),
           "cpasync": (CPASYNC, THREADS), "ldg": (LDG, THREADS), "ldgT": (LDG_T, None),
           "coupled": (COUPLED, None)}


def kernel_of(variant, stages):
    """(kernel, threads) of a variant; ``stages`` picks among a family's builds (for "ldgT" a
    (U, threads) pair)."""
    kern, threads = KERNELS[variant]
    if variant in ("ldgT", "coupled"):
        return kern[stages], stages[1]
    return (kern[stages] if isinstance(kern, dict) else kern), threads


def configs(variant):
    """(chunk bytes, stages, blocks an SM) to time for a variant."""
    if variant == "bulk":
        return [(16384, 4, 1), (16384, 8, 1), (32768, 4, 1), (16384, 4, 2), (8192, 8, 2),
                (32768, 6, 1)]
    if variant == "bulk_stg":
        return [(16384, 4, 1), (16384, 4, 2), (16384, 6, 2), (8192, 8, 2), (32768, 3, 2)]
    if variant == "ldgT":  # (bytes a thread, (U, threads), a block per tile)
        return [(16 * U, (U, T), 0) for U, T in LDG_T]
    if variant == "coupled":  # (bytes a thread, (U, threads, coupling, cluster), a block a tile)
        return [(16 * key[0], key, 0) for key in COUPLED]
    if variant == "ldg":  # (bytes a thread, U, blocks an SM; 0: a block per tile)
        return [(16 * U, U, 0) for U in (1, 2, 4, 8)] + [(64, 4, 8), (64, 4, 16), (128, 8, 8)]
    return [(8192, 2, 4), (8192, 4, 2), (16384, 2, 3), (16384, 3, 2), (8192, 3, 4)]


def launch(variant, src, dst, chunk, stages, blocks, stream=0):
    kern, threads = kernel_of(variant, stages)
    if variant in ("ldg", "ldgT", "coupled"):  # chunk: bytes a thread; blocks: the grid (0: all)
        tile = threads * chunk
        ntiles = src.size // tile
        grid = blocks or ntiles
        args = (src, dst, np.int64(ntiles), np.int64(tile), np.int64(grid))
        if getattr(kern, "nbk_cluster", None) is None:
            kern[grid, threads, stream](*args)
            return
        from nbkernels import arrays, runner  # numba's dispatcher cannot launch clusters
        from nbkernels.arch import Arch
        args = (arrays.as_view(src, "src"), arrays.as_view(dst, "dst")) + args[2:]
        runner.launch_jit(kern, SIG, (grid, 1, 1), (threads, 1, 1), 0, stream, args,
                          ("bulk_copy_bw", "coupled") + tuple(stages), Arch.parse("sm_90"))
        return
    smem = stages * chunk + 128
    nchunks = src.size // chunk
    kern[blocks, threads, stream, smem](src, dst, np.int64(nchunks), np.int64(chunk),
                                        np.int64(stages))


def check_sim():
    """Each variant and a few configurations on a 64 KB copy through the simulator."""
    rng = np.random.default_rng()
    for variant in KERNELS:
        cases = [(1024, 2, 3), (1024, 4, 5), (2048, 3, 2)] if variant not in ("ldg", "ldgT",
                                                                           "coupled") \
            else [(16, 1, 0), (64, 4, 3), (128, 8, 0)] if variant == "ldg" else \
            [c for c in configs(variant) if c[1][-1] == 1]  # the simulator runs no clusters
        for chunk, stages, blocks in cases:
            src = rng.integers(0, 256, 64 * 1024, dtype=np.uint8)
            dst = np.full_like(src, 0xA5)
            d_src, d_dst = cuda.to_device(src), cuda.to_device(dst)
            launch(variant, d_src, d_dst, chunk, stages, blocks)
            got = d_dst.copy_to_host()
            ok = np.array_equal(got, src)
            print(f"sim {variant:8s} chunk {chunk} stages {stages} blocks {blocks}: "
                  f"{'ok' if ok else 'WRONG'}")
            if not ok:
                return 1
    return 0


def time_gpu(mibs, reps=15):
    import cupy

    from nbkernels.matmul.bench import _time

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    dev = cupy.cuda.Device()
    print(f"{cupy.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, {sms} SMs")
    for variant in KERNELS:
        for ch, st, _ in configs(variant):
            if variant not in ("ldg", "ldgT", "coupled"):
                nbkernels.enable_large_shared_memory(kernel_of(variant, st)[0], SIG,
                                                     st * ch + 128)
    rows = []
    for mib in mibs:
        n = mib << 20
        # inputs larger than L2 rotated: two sources and two destinations, alternated
        srcs = [cupy.random.randint(0, 256, n, dtype=cupy.uint8) for _ in range(2)]
        dsts = [cupy.empty(n, cupy.uint8) for _ in range(2)]

        def timed(fn):
            """Device GB/s of one launch: the package's timing (each timed launch queued behind
            a spin kernel that outlasts its host work, so numba's ~40 us of dispatch stays
            outside the events; inputs rotated)."""
            t, _ = _time(fn, list(zip(srcs, dsts)), reps)
            return 2 * n / t / 1e9

        def checked(fn, what):
            for d in dsts:
                d.fill(0xA5)
            for s, d in zip(srcs, dsts):
                fn(s, d)
            cupy.cuda.Device().synchronize()
            if not all(bool((d == s).all()) for s, d in zip(srcs, dsts)):
                raise SystemExit(f"{what}: the copy is wrong")

        def cupy_copy(s, d):
            d[...] = s

        ref = timed(cupy_copy)
        rows.append((mib, "cupy", "", ref, 1.0))
        print(f"{mib:5d} MiB  cupy copy                     {ref:7.0f} GB/s", flush=True)
        for variant in KERNELS:
            for chunk, stages, bps in configs(variant):
                def fn(s, d, v=variant, c=chunk, st=stages, bl=bps * sms):
                    launch(v, s, d, c, st, bl)
                cfg = f"{chunk // 1024}KBx{stages} {bps}/SM" if variant not in ("ldg", "ldgT",
                                                                                "coupled") \
                    else f"U{stages} " + (f"{bps}/SM" if bps else "all tiles") if variant == "ldg" \
                    else f"U{stages[0]} T{stages[1]} ({chunk * stages[1] // 1024} KB)" + (
                        "" if variant == "ldgT" else
                        f" {('free', 'block', 'cluster', 'reduce')[stages[2]]} x{stages[3]}")
                checked(fn, f"{variant} {cfg}")
                bw = timed(fn)
                ref2 = timed(cupy_copy)  # the peer again beside each variant: the clock drifts
                rows.append((mib, variant, cfg, bw, bw / ref2))
                print(f"{mib:5d} MiB  {variant:9s} {cfg:17s}  {bw:7.0f} GB/s  "
                      f"{100 * bw / ref2:5.1f}% of the copy beside it ({ref2:.0f})", flush=True)
    print("\nsize  variant   config            GB/s   x copy")
    for mib, v, cfg, bw, r in rows:
        print(f"{mib:5d} {v:9s} {cfg:17s} {bw:6.0f}  {r:6.3f}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", default="1024,256", help="copy sizes in MiB")
    ap.add_argument("--sim", action="store_true", help="check the kernels in the simulator")
    a = ap.parse_args(argv)
    if a.sim:
        return check_sim()
    return time_gpu([int(m) for m in a.mib.split(",")])


if __name__ == "__main__":
    sys.exit(main())
