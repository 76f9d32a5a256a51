"""The Hopper GEMM variant (sm_90a): its SASS, its dispatch, and the real kernel in numba's
simulator (TMA, mbarrier and wgmma simulated by nbkernels) against float64 NumPy. The GPU
sweep is in test_gemm_sm90a_gpu.py."""
import json
import re

import pytest
from numba import types

from nbkernels import toolchain

from .simrun import simulated_result

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None, reason="ptxas not installed")


@needs_ptxas
@pytest.mark.parametrize("kind,a_km,b_km", [("bf16", True, False), ("f16", False, True)])
def test_small_tile_assembles_to_hgmma_and_tma_without_local_memory(kind, a_km, b_km):
    from nbkernels.matmul import run, wgmma_config, wgmma_kernel

    cfg = wgmma_config.WgmmaConfig(64, 64, 2)
    k = wgmma_kernel.build_kernel(cfg, kind, a_km, b_km)
    ptx = toolchain.compile_ptx_for(k.py_func, run._wgmma_sig(types.Tuple(())), "sm_90a",
                                    launch_bounds=k.nbk_launch_bounds)
    asm = toolchain.assemble(ptx, "sm_90a")
    sass = toolchain.disassemble(asm.cubin)
    hgmma = re.findall(r"HGMMA\.64x64x16\.F32[^;]*", sass)
    assert len(hgmma) == 4, hgmma  # one per 16-wide k-step of a 64-wide stage
    assert all(("tnspA" in h) == (not a_km) and ("tnspB" in h) == (not b_km)
               for h in re.findall(r"HGMMA[^;]*", sass))
    assert len(re.findall(r"UTMALDG\.3D", sass)) == 2  # 64x64 stage: one box per operand
    # the maps travel by value (wgmma_kernel.BY_VALUE): a 256-byte, 64-aligned parameter whose
    # generic address every TMA instruction reads, no pointer loaded from the parameters
    decl = re.findall(r"\.param \.align 64 \.b8 (\w+_param_4)\[256\]", ptx)
    assert len(decl) == 1, "the maps' parameter is not declared by value"
    assert not re.search(rf"ld\.param[^;]*{decl[0]}\]", ptx)
    assert re.findall(rf"cvta\.param\.u64 %rd\d+, {decl[0]};", ptx)
    assert "UTMACCTL.PF" in sass and "UTMACCTL.IV" not in sass  # prefetched, no acquire fence
    assert "USETMAXREG" in sass  # the producer gives registers to the consumers
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0
    # assembled as a whole program: ptxas keeps the wgmma pipelined and honours setmaxnreg
    # (as a relocatable unit, through nvJitLink, it does neither: C7509 / C7504)
    assert "C7509" not in asm.log and "C7504" not in asm.log, asm.log
    # the block owns what its warpgroups' setmaxnreg ask for in all, or .inc never returns
    assert asm.registers * cfg.threads >= k.nbk_reg_pool, (asm.registers, k.nbk_reg_pool)
    waits = re.findall(r"(HGMMA[^;]*;|WARPGROUP\.DEPBAR[^;]*;)", sass)
    loop = waits[:5]  # the first k-tile: four HGMMA, one wait for the group
    assert [w.startswith("HGMMA") for w in loop] == [True] * 4 + [False], waits


@pytest.mark.parametrize("tool,driver,isa,want", [
    ((13, 4), (13, 0), (9, 4), "ptxas 13.4"),  # the cu13 extra's ptxas, an older driver
    ((13, 0), (13, 0), (9, 0), "ptxas 13.0"),
    (None, (13, 4), (9, 4), "driver JIT"),  # no ptxas: the driver reads the PTX
    ((13, 0), (13, 2), (9, 2), "driver JIT"),  # ptxas too old for the PTX, the driver is not
    ((13, 0), (13, 0), (9, 4), None),  # only nvJitLink is left: serialized, with a warning
])
def test_sm90a_kernels_are_assembled_as_whole_programs(monkeypatch, tool, driver, isa, want):
    from numba.cuda.cudadrv import driver as drv

    from nbkernels import compat, launch

    monkeypatch.setattr(launch, "_tool_isa", lambda: tool and (tool, compat.max_ptx_isa(tool)))
    monkeypatch.setattr(drv.driver, "get_version", lambda: driver, raising=False)
    ptx = f".version {isa[0]}.{isa[1]}\n.target sm_90a\n"
    assert launch.whole_program_route(ptx) == want


SCRIPT = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from gemm_cases import make, reference, relerr, TOLERANCES, DTYPES
import nbkernels
from nbkernels.matmul.wgmma_config import WgmmaConfig

cases = json.loads(sys.argv[1])
rng = np.random.default_rng()
out = []
for dtype, (ba, bb), m, n, k, lay, tile, with_c, epi in cases:
    sa = (ba, m, k) if ba else (m, k)
    sb = (bb, k, n) if bb else (k, n)
    a, b = make(rng, dtype, sa, lay[0]), make(rng, dtype, sb, lay[1])
    rdt = DTYPES[dtype]
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (m, n)
    c = make(rng, dtype, shape) if with_c else None
    res = np.full(shape, np.nan, rdt)
    alpha, beta = (0.75, 0.5) if with_c else (1.25, 0.0)
    cfg = WgmmaConfig(*tile)
    plan = nbkernels.explain(a, b, c, variant="sm90a", tile=cfg)
    assert "variant: sm90a" in plan, plan
    if epi:
        bias = rng.standard_normal(n).astype(np.float32)
        @nbkernels.gemm
        def bias_relu(acc, i, j, bias):
            return max(acc + bias[j], 0.0)
        bias_relu(a, b, bias, out=res, variant="sm90a", tile=cfg)
        want = np.maximum(reference(a, b) + bias, 0)
    else:
        nbkernels.gemm(a, b, c, alpha=alpha, beta=beta, out=res, variant="sm90a", tile=cfg)
        want = reference(a, b, c, alpha, beta)
    err, where = relerr(res, want)
    out.append([err, where, TOLERANCES[(dtype, None)]])
print("RESULT" + json.dumps(out))
'''

# dtype, (batch_a, batch_b), M, N, K, layouts (a, b), tile (bm, bn, stages), beta * C, epilogue.
# M, N, K cut tiles and k-tiles at the edges (TMA zero fill; TMA needs leading dimensions of
# 16 bytes); one block walks every tile, so the ring's phases wrap many times.
CASES = [
    ("bfloat16", (0, 0), 70, 136, 72, "rr", (64, 64, 2), True, False),
    ("float16", (0, 0), 136, 64, 104, "cc", (128, 64, 3), False, False),
    ("bfloat16", (3, 1), 40, 72, 64, "rc", (64, 128, 2), True, False),
    ("float16", (2, 2), 24, 24, 40, "tr", (64, 64, 2), False, False),
    ("float16", (0, 0), 65, 80, 136, "rr", (64, 64, 3), False, True),
    ("bfloat16", (0, 0), 130, 264, 64, "rr", (128, 256, 2), False, False),
    # ping-pong: two consumers on alternate tiles (odd and even tile counts per block)
    # (more k-tiles than stages: the second consumer must not wait on a stage two phases on)
    ("float16", (0, 0), 200, 136, 264, "rr", (128, 64, 3, 8, True), True, False),
    ("bfloat16", (2, 1), 64, 72, 40, "cc", (64, 64, 2, 8, True), False, True),
    # cooperative consumers of 128 rows (two 64-row wgmma blocks each), both A majors
    ("bfloat16", (0, 0), 200, 72, 136, "rc", (256, 64, 3, 8, False, 128), True, False),
    ("float16", (0, 0), 136, 64, 72, "cr", (128, 64, 2, 8, False, 128), False, True),
    # offload: the producer's warps store the staged tiles; staged (inside N, rows cut at M),
    # guarded (last tile column; beta * C) and two 64-row blocks per consumer
    ("bfloat16", (0, 0), 130, 264, 136, "rr", (128, 256, 2, 8, False, 64, 1, True, True), False, False),
    # two k-tiles of wgmma in flight (depth 2): stages freed two k-tiles late, K shorter than
    # the depth (one k-tile), longer than the ring; cooperative and ping-pong
    ("bfloat16", (0, 0), 136, 128, 328, "rr", (128, 64, 3, 8, False, 64, 1, True, False, 2), False, False),
    ("float16", (0, 0), 70, 136, 40, "rc", (64, 64, 3, 8, False, 64, 1, True, False, 2), True, False),
    ("float16", (0, 0), 200, 136, 264, "rr", (128, 64, 4, 8, True, 64, 1, True, False, 3), False, False),
    ("float16", (2, 1), 72, 128, 64, "cr", (64, 128, 2, 8, False, 64, 1, True, True), False, True),
    ("bfloat16", (0, 0), 70, 136, 72, "rc", (64, 64, 2, 8, False, 64, 1, True, True), True, False),
    ("float16", (0, 0), 136, 128, 136, "rr", (128, 64, 3, 8, False, 128, 1, True, True), False, False),
    # split tail over 3 blocks (run.SIM_BLOCKS_STREAMK): 8 tiles leave a last wave of 2 (more
    # than half the blocks: whole tiles only); 4 tiles leave 1, split in K halves (2 and 2,
    # 1 and 2, 2 and 3 k-tiles) between blocks 0 and 1; a single tile gets two blocks. Staged
    # and guarded epilogues, beta * C, a batch with a fused epilogue, two consumers with depth 2
    ("bfloat16", (0, 0), 200, 128, 320, "rr", (64, 64, 2, 8, False, 64, 1, True, False, 1, True), False, False),
    ("bfloat16", (0, 0), 100, 104, 200, "rr", (64, 64, 2, 8, False, 64, 1, True, False, 1, True), False, False),
    ("float16", (0, 0), 56, 64, 136, "cr", (64, 64, 3, 8, False, 64, 1, True, False, 1, True), True, False),
    ("bfloat16", (2, 1), 72, 64, 136, "rc", (64, 64, 2, 8, False, 64, 1, True, False, 1, True), False, True),
    ("float16", (0, 0), 130, 72, 264, "rr", (128, 64, 3, 8, False, 64, 1, True, False, 2, True), False, False),
    # deferred stores (defer): the last chunks of each staged tile stored during the next
    # tile's k-loop. Every chunk deferred with one k-tile (the excess before the k-loop), a
    # guarded last tile column between staged ones, rows cut at M; one chunk of four over
    # many k-tiles with a batch and a fused epilogue; with the split tail (a deferred chunk
    # across a K half, the owner's wait); 3 of 4 chunks with depth 2 (the block's last tile's
    # chunks stored at the end)
    ("float16", (0, 0), 70, 200, 40, "rr", (64, 128, 2, 8, False, 64, 1, True, False, 1, False, 2), False, False),
    ("bfloat16", (2, 1), 72, 256, 200, "rc", (128, 256, 2, 8, False, 64, 1, True, False, 1, False, 1), False, True),
    ("bfloat16", (0, 0), 200, 128, 320, "cr", (64, 64, 2, 8, False, 64, 1, True, False, 1, True, 1), False, False),
    ("float16", (0, 0), 130, 264, 200, "rr", (128, 256, 3, 8, False, 64, 1, True, False, 2, False, 3), False, False),
]


@pytest.fixture(scope="module")
def results():
    return simulated_result(["-c", SCRIPT, json.dumps(CASES)], timeout=2400, what="simulated sm90a GEMM")


@pytest.mark.parametrize("i", range(len(CASES)), ids=[
    f"{c[0]}-{c[1]}-{c[2]}x{c[3]}x{c[4]}-{c[5]}-{c[6]}{'-c' if c[7] else ''}{'-epi' if c[8] else ''}"
    for c in CASES])
def test_sm90a_kernel_in_simulator(results, i):
    err, where, tol = results[i]
    assert err <= tol, f"{CASES[i]}: relative error {err:.3g} > {tol}; {where}"


PLAN = r'''
import json
import numpy as np
import nbkernels
from nbkernels.errors import NbkernelsError
f16 = np.float16
out = {}
a, b = np.ones((64, 64), f16), np.ones((64, 64), f16)
odd = np.ones((64, 60), f16)
out["forced"] = nbkernels.explain(a, b, variant="sm90a")
from nbkernels.matmul.wgmma_config import WgmmaConfig
out["staged_w"] = nbkernels.explain(a, b, variant="sm90a", tile=WgmmaConfig(128, 64, 2, 8, False, 128))
out["deferred"] = nbkernels.explain(a, b, variant="sm90a", tile=WgmmaConfig(128, 256, 4, defer=2))
out["guarded"] = nbkernels.explain(a, b, variant="sm90a", tile=WgmmaConfig(64, 64, 2, staged=False))
try:
    nbkernels.explain(a, odd, variant="sm90a")
except NbkernelsError as e:
    out["odd_forced"] = str(e)
try:
    nbkernels.explain(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), variant="sm90a",
                      precision="tf32")
except NbkernelsError as e:
    out["tf32_forced"] = str(e)
out["k0"] = None
try:
    nbkernels.explain(np.ones((8, 0), f16), np.ones((0, 8), f16), variant="sm90a")
except NbkernelsError as e:
    out["k0"] = str(e)
print("RESULT" + json.dumps(out))
'''


def test_plan_says_what_the_sm90a_variant_takes_and_refuses():
    out = simulated_result(["-c", PLAN], what="sm90a planning")
    assert "loader: TMA boxes" in out["forced"] and "a K-major, b N-major" in out["forced"]
    for staged in ("forced", "staged_w"):  # the default tile; consumers of two 64-row blocks
        assert "epilogue: 16-bit results in 16-byte aligned rows staged through shared memory" \
            in out[staged]
    assert "epilogue: guarded stores (asked for: WgmmaConfig(staged=False))" in out["guarded"]
    assert ("the last 2 of each tile's 4 64-column chunks stay staged and are stored during the "
            "next tile's k-loop") in out["deferred"]
    assert "stay staged" not in out["staged_w"]
    assert "b's leading dimension (60 elements) is not a multiple of 16 bytes" in out["odd_forced"]
    assert "sm90a variant computes ('bf16', 'f16'), not tf32" in out["tf32_forced"]
    assert "K = 0" in out["k0"]


# --- clusters of two blocks sharing B (cfg.cluster == 2) ---------------------------------------
def _assemble(cfg, kind, a_km, b_km, epilogue=None, n_extra=0):
    from nbkernels import launch
    from nbkernels.matmul import run, wgmma_kernel

    k = wgmma_kernel.build_kernel(cfg, kind, a_km, b_km, epilogue, n_extra)
    ptx = toolchain.compile_ptx_for(k.py_func, run._wgmma_sig(types.Tuple(())), "sm_90a",
                                    launch_bounds=k.nbk_launch_bounds)
    if getattr(k, "nbk_cluster", None):
        ptx = launch.cluster_ptx(ptx, k.nbk_cluster)  # as launch.build writes it
    asm = toolchain.assemble(ptx, "sm_90a")
    return k, ptx, asm, toolchain.disassemble(asm.cubin)


@needs_ptxas
@pytest.mark.parametrize("tile,kind,a_km,b_km,per_rank", [
    ((128, 256, 4), "bf16", True, True, (1, 1)),  # K-major B: a half-box of 128 rows each
    ((128, 256, 4), "f16", True, False, (2, 2)),  # N-major B: 64-column boxes 0, 2 and 1, 3
    ((128, 128, 6, 8, True), "bf16", False, True, (1, 1)),  # ping-pong consumers, M-major A
    ((128, 64, 6), "bf16", True, False, (1, 0)),  # one box: rank 0 loads all of B, rank 1 none
])
def test_cluster_kernel_multicasts_b_and_stays_a_whole_program(tile, kind, a_km, b_km, per_rank):
    from nbkernels.matmul import wgmma_config

    cfg = wgmma_config.WgmmaConfig(*tile, cluster=2)
    k, ptx, asm, sass = _assemble(cfg, kind, a_km, b_km)
    assert k.nbk_cluster == (2, 1, 1)
    assert ".explicitcluster" in ptx and ".reqnctapercluster 2, 1, 1" in ptx
    assert "C7509" not in asm.log and "C7504" not in asm.log, asm.log
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0
    assert asm.registers * cfg.threads >= k.nbk_reg_pool, (asm.registers, k.nbk_reg_pool)
    multicast = re.findall(r"UTMALDG\.3D\.MULTICAST", sass)
    plain = re.findall(r"UTMALDG\.3D(?!\.MULTICAST)", sass)
    # B: each block issues its share (the other's are branched over), to both blocks
    assert len(multicast) == (1 if b_km else sum(per_rank)), multicast
    if not b_km:
        assert [k.nbk_source.count(f"if rank == {r}: tmc(") for r in (0, 1)] == list(per_rank)
    assert len(plain) == (1 if a_km else cfg.bm // 64), plain  # A: its own, unshared
    assert re.search(r"HGMMA\.64x\d+x16\.F32", sass)
    assert "USETMAXREG" in sass
    # the cluster barrier after init and before exit; remote releases of the empty slots
    assert sass.count("UCGABAR_ARV") >= 2 and sass.count("UCGABAR_WAIT") >= 2
    assert "SYNCS.ARRIVE.TRANS64.RED" in sass
    # no GPU-wide fence on the per-k-tile remote releases (a `.release.cluster` arrive emits
    # one): the only ones belong to the two cluster barriers (barrier.cluster.arrive.release)
    assert sass.count("MEMBAR.ALL.GPU") == sass.count("UCGABAR_ARV") == 2


@needs_ptxas
def test_cluster_kernel_with_fused_epilogue_assembles():
    """The ``@nbkernels.gemm`` path: the user's function applied to the accumulators."""
    from numba import cuda

    from nbkernels.matmul import wgmma_config

    relu = cuda.jit(device=True, inline="always")(lambda acc, i, j: max(acc, 0.0))
    cfg = wgmma_config.WgmmaConfig(128, 256, 4, cluster=2)
    k, ptx, asm, sass = _assemble(cfg, "bf16", True, False, relu, 0)
    assert "if m0 < M:" in k.nbk_source  # a pair's second tile below the matrix stores nothing
    assert "UTMALDG.3D.MULTICAST" in sass and "HGMMA" in sass
    assert "C7509" not in asm.log and "C7504" not in asm.log, asm.log
    assert asm.registers * cfg.threads >= k.nbk_reg_pool


def test_cluster_one_kernel_source_and_keys_are_unchanged():
    """cluster=1 is today's kernel: the same source text, key and tensor-map boxes."""
    from nbkernels.matmul import wgmma_config as wc, wgmma_kernel as wk

    one, two = wc.WgmmaConfig(128, 256, 4), wc.WgmmaConfig(128, 256, 4, cluster=2)
    assert one.key == (128, 256, 4, 8, False, 64) and two.key == one.key + (2,)
    assert wc.WgmmaConfig(*two.key) == two
    src1 = wk.build_kernel(one, "bf16", True, False).nbk_source
    src2 = wk.build_kernel(two, "bf16", True, False).nbk_source
    assert "cluster" not in src1 and "tmc(" not in src1 and "cuda.syncthreads()" in src1
    assert "barrier_cluster_wait" in src2 and "cuda.syncthreads()" not in src2
    assert not hasattr(wk.build_kernel(one, "bf16", True, False), "nbk_cluster")


def test_cache_key_names_the_cluster_shape(monkeypatch):
    from numba.cuda.cudadrv import driver as drv

    from nbkernels import launch
    from nbkernels.arch import Arch

    monkeypatch.setattr(drv.driver, "get_version", lambda: (13, 0), raising=False)
    monkeypatch.setattr(launch, "_tool_isa", lambda: None)
    a90 = Arch(9, 0, "a")
    base = launch.cache_key("kernel", ("wgmma", (128, 256, 4, 8, False, 64)), a90)
    assert launch.cache_key("kernel", ("wgmma", (128, 256, 4, 8, False, 64)), a90, None) == base
    two = launch.cache_key("kernel", ("wgmma", (128, 256, 4, 8, False, 64)), a90, (2, 1, 1))
    assert two != base
    assert two != launch.cache_key("kernel", ("wgmma", (128, 256, 4, 8, False, 64)), a90,
                                   (1, 2, 1))


def test_cluster_ptx_declares_the_entry():
    from nbkernels import launch
    from nbkernels.errors import NbkernelsError

    ptx = ".version 8.0\n.target sm_90a\n.visible .entry k(\n\t.param .u64 p0\n)\n.maxntid 384, 1, 1\n{\n}\n"
    out = launch.cluster_ptx(ptx, (2, 1, 1))
    assert ")\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n.maxntid 384" in out
    with pytest.raises(NbkernelsError, match="no kernel entry"):
        launch.cluster_ptx(".version 8.0\n", (2, 1, 1))


@pytest.mark.parametrize("kwargs,msg", [
    (dict(cluster=3), "cluster must be 1 or 2 blocks, got 3"),
    (dict(cluster=0), "cluster must be 1 or 2 blocks, got 0"),
    (dict(depth=4), r"depth \(k-tiles of wgmma in flight\) must be in \[1, stages\), got 4"),
    (dict(depth=0), r"depth .* got 0"),
])
def test_cluster_config_is_validated(kwargs, msg):
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import wgmma_config

    with pytest.raises(NbkernelsError, match=msg):
        wgmma_config.WgmmaConfig(128, 256, 4, **kwargs)


def test_bench_config_names_round_trip_with_the_cluster_suffix():
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import bench_hopper, wgmma_config as wc

    for text, cfg in [("128x256x4c2", wc.WgmmaConfig(128, 256, 4, cluster=2)),
                      ("128x128x6pc2", wc.WgmmaConfig(128, 128, 6, 8, True, cluster=2)),
                      ("256x128x4wc2", wc.WgmmaConfig(256, 128, 4, 8, False, 128, cluster=2)),
                      ("128x256x4", wc.WgmmaConfig(128, 256, 4)),
                      ("128x256x4g", wc.WgmmaConfig(128, 256, 4, staged=False)),
                      ("128x256x4c2g", wc.WgmmaConfig(128, 256, 4, cluster=2, staged=False)),
                      ("128x128x6pg", wc.WgmmaConfig(128, 128, 6, 8, True, staged=False)),
                      ("128x256x4r16", wc.WgmmaConfig(128, 256, 4, 16)),
                      ("256x128x4wr4c2g", wc.WgmmaConfig(256, 128, 4, 4, False, 128, cluster=2,
                                                         staged=False)),
                      ("128x256x3o", wc.WgmmaConfig(128, 256, 3, offload=True)),
                      ("128x128x6pd2", wc.WgmmaConfig(128, 128, 6, 8, True, depth=2)),
                      ("128x256x4d3", wc.WgmmaConfig(128, 256, 4, depth=3)),
                      ("128x256x4e2", wc.WgmmaConfig(128, 256, 4, defer=2)),
                      ("128x256x4d2ke2", wc.WgmmaConfig(128, 256, 4, depth=2, streamk=True,
                                                        defer=2)),
                      ("128x256x3e4", wc.WgmmaConfig(128, 256, 3, defer=4))]:
        assert bench_hopper.parse_config(text) == cfg
        assert bench_hopper.config_name(cfg) == text
        assert wc.WgmmaConfig(*cfg.key) == cfg  # the key rebuilds the config (prewarm jobs)
    assert bench_hopper.parse_config("128x256x4s") == wc.WgmmaConfig(128, 256, 4)  # s: staged
    assert bench_hopper.config_name(wc.DEFAULT) == "128x256x4e2"
    for c in wc.CLUSTER_CANDIDATES:
        assert c.cluster == 2 and c in wc.CANDIDATES
        assert bench_hopper.parse_config(bench_hopper.config_name(c)) == c
    with pytest.raises(NbkernelsError, match=r"expected BMxBNxSTAGES\[p\|w\]\[rG\]\[c2\]\[g\|o\]\[dD\]\[k\]\[eD\]"):
        bench_hopper.parse_config("128x256x4c")


CLUSTER_SIM = r'''
import json
import numpy as np
import nbkernels
from nbkernels.errors import NbkernelsError
from nbkernels.matmul.wgmma_config import WgmmaConfig
a, b = np.ones((200, 64), np.float16), np.ones((64, 128), np.float16)
cfg = WgmmaConfig(128, 128, 4, cluster=2)
out = {"plan": nbkernels.explain(a, b, variant="sm90a", tile=cfg)}
try:
    nbkernels.gemm(a, b, variant="sm90a", tile=cfg)
except NbkernelsError as e:
    out["run"] = str(e)
print("RESULT" + json.dumps(out))
'''


def test_cluster_config_is_explained_and_refused_by_the_simulator():
    """numba's simulator runs a grid's blocks one at a time, so the two blocks of a cluster
    never run together: a cluster config is planned (and explained) but not simulated."""
    out = simulated_result(["-c", CLUSTER_SIM], what="sm90a cluster planning")
    assert "clusters of 2x1 blocks sharing B tiles by TMA multicast" in out["plan"]
    assert "cannot run in numba's simulator" in out["run"]


# --- the staged epilogue (16-byte stores through shared memory) --------------------------------
def _staged_build(cfg, kind, a_km, b_km, epi):
    """The kernel for 16-byte aligned D (staged epilogue), with a bias+ReLU epilogue if
    ``epi``, assembled for sm_90a: (kernel, assembly, SASS)."""
    from nbkernels.matmul import run, wgmma_kernel

    def bias_relu(acc, i, j, bias):
        return max(acc + bias[j], 0.0)

    k = wgmma_kernel.build_kernel(cfg, kind, a_km, b_km, bias_relu if epi else None,
                                  int(epi), 2)
    ext = types.Tuple((types.Array(types.float32, 1, "C"),) if epi else ())
    ptx = toolchain.compile_ptx_for(k.py_func, run._wgmma_sig(ext, cfg.streamk), "sm_90a",
                                    launch_bounds=k.nbk_launch_bounds)
    asm = toolchain.assemble(ptx, "sm_90a")
    return k, asm, toolchain.disassemble(asm.cubin)


def _alpha_blocks(sass):
    """FMULs a thread skips, per branch on ``alpha != 1`` (a ``@!P BRA`` over them to a label,
    P last set by ``FSETP.NEU P, PT, R, 1``): one block of BN / 2 per 64-row block when alpha
    is applied on its own branch, none when the staged path multiplies each element itself."""
    lines = [x.strip() for x in sass.splitlines()]
    alpha_pred, blocks = {}, []
    for i, x in enumerate(lines):
        d = re.search(r"SETP\S* (P\d), ", x)
        if d:  # the predicate's latest definition: the compare with 1 or another
            alpha_pred[d.group(1)] = bool(re.search(r"FSETP\.NEU\.AND P\d, PT, R\d+, 1, PT", x))
        b = re.search(r"@!(P\d) BRA `\((\.L_x_\d+)\)", x)
        if b and alpha_pred.get(b.group(1)):
            end = lines.index(b.group(2) + ":", i)
            blocks.append(sum(" FMUL " in y for y in lines[i:end]))
    return blocks


@needs_ptxas
@pytest.mark.parametrize("tile,kind,a_km,b_km,epi", [
    ((128, 256, 4), "bf16", True, False, False),
    ((128, 256, 4), "f16", False, True, True),
    ((256, 128, 4, 8, False, 128), "bf16", False, False, False),  # two 64-row blocks per consumer
    ((128, 128, 6, 8, True), "f16", True, True, True)])  # ping-pong: whole 128-row tiles
def test_tiles_stage_their_epilogue_without_spills(tile, kind, a_km, b_km, epi):
    """With 16-byte aligned rows, per consumer thread and 64-row block: BN / 64 chunks of 64
    columns, each 4 stmatrix.x4, 4 shared reads and 4 global stores of 16 bytes; the guarded
    pair stores stay for the last tile column and beta * C; nothing spills at the register cap
    of the tile's thread count. The k-loop (the full-barrier wait to the wait after the
    wgmma) keeps its descriptors and counters on the uniform datapath: no R2UR (the ping-pong
    tile's took 32 a k-tile while its turn was tested on a per-thread consumer index, the
    cooperative tiles' 6 while their first row was one: perf-notes s21, s24)."""
    from nbkernels.matmul import wgmma_config, wgmma_kernel

    cfg = wgmma_config.WgmmaConfig(*tile)
    assert cfg.staged  # the default
    k, asm, sass = _staged_build(cfg, kind, a_km, b_km, epi)
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0, asm.log
    loop = _k_loop(sass, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1")
    assert sum("HGMMA" in x for x in loop) == cfg.blocks_m * 4, "\n".join(loop)  # one k-tile
    assert sum("R2UR" in x for x in loop) == 0, "\n".join(loop)
    n = 4 * (cfg.bn // 64) * cfg.blocks_m  # of each instruction, per thread
    assert len(re.findall(r"\bSTSM\.16\.M88\.4\b", sass)) == n, re.findall(r"STSM[^;]*", sass)
    assert len(re.findall(r"STG\.E\.EF\.128", sass)) == n
    assert len(re.findall(r"LDS\.128", sass)) == n
    if not cfg.pingpong:  # alpha on a branch that alpha == 1 skips, not in the staged path
        # (128 FMUL a thread that every launch's epilogue fetched: perf-notes s25)
        assert _alpha_blocks(sass) == [cfg.bn // 2] * cfg.blocks_m, _alpha_blocks(sass)
        assert "if alpha != 1:" in k.nbk_source
    # the tile walk and its coordinates in 32 bits: no 64-bit division or remainder call (the
    # producer ran six before its first TMA load: perf-notes s26)
    assert not re.findall(r"__cuda_sm20_(?:div|rem)_[su]64", sass), "64-bit division in the tile walk"
    assert "store_all" in k.nbk_source and "beta == 0" in k.nbk_source  # the guarded fallback
    # 2 KB per consumer warp behind the ring, inside the opt-in limit of an H100/H200
    assert k.nbk_smem_bytes == cfg.smem_bytes() + 4 * cfg.consumers * 2048 <= 232448
    guarded = wgmma_kernel.build_kernel(cfg, kind, a_km, b_km, None, 0, True)
    assert guarded.nbk_smem_bytes == cfg.smem_bytes() and "store_staged" not in guarded.nbk_source


@needs_ptxas
@pytest.mark.parametrize("tile,kind,a_km,b_km,epi", [
    ((128, 256, 3, 8, False, 64, 1, True, True), "bf16", True, False, False),
    ((128, 256, 3, 8, False, 64, 1, True, True), "f16", False, True, True),
    ((256, 128, 3, 8, False, 128, 1, True, True), "bf16", True, True, False)])
def test_offloaded_tiles_stage_whole_tiles_and_store_from_the_producer(tile, kind, a_km, b_km,
                                                                     epi):
    """offload: the consumers stmatrix the whole tile (4 per chunk, per 64-row block) and store
    nothing staged themselves; the producer's storer loop holds the only 16-byte shared reads
    and global stores; the producer keeps STORER_REGS, the consumers
    what is left; nothing spills; ring and staging fit an H100/H200 block."""
    from nbkernels.matmul import wgmma_config, wgmma_kernel

    cfg = wgmma_config.WgmmaConfig(*tile)
    assert cfg.offload
    k, asm, sass = _staged_build(cfg, kind, a_km, b_km, epi)
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0, asm.log
    n = 4 * (cfg.bn // 64) * cfg.blocks_m
    assert len(re.findall(r"\bSTSM\.16\.M88\.4\b", sass)) == n
    # the storers' loop (unrolled by the compiler): a shared read per global store, fewer than
    # one per chunk (the consumers' own stores, without offload)
    lds, stg = len(re.findall(r"LDS\.128", sass)), len(re.findall(r"STG\.E\.EF\.128", sass))
    assert 1 <= lds == stg < n, (lds, stg)
    regs = sorted(int(v, 16) for v in re.findall(r"USETMAXREG\.\w+\.CTAPOOL (?:UP0, )?0x([0-9a-f]+)", sass))
    assert regs == [wgmma_kernel.STORER_REGS,
                    wgmma_kernel.consumer_regs(cfg.consumers, wgmma_kernel.STORER_REGS)], regs
    assert k.nbk_smem_bytes == cfg.smem_bytes() + cfg.bm * cfg.bn * 2 <= 232448


def test_offload_config_is_validated_and_round_trips():
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import wgmma_config as wc
    from nbkernels.matmul.bench_hopper import config_name, parse_config

    cfg = parse_config("128x256x3o")
    assert cfg == wc.WgmmaConfig(128, 256, 3, offload=True) == wc.WgmmaConfig(*cfg.key)
    assert config_name(cfg) == "128x256x3o" and "stores by the producer's warps" in str(cfg)
    for bad in (dict(pingpong=True), dict(cluster=2), dict(staged=False)):
        with pytest.raises(NbkernelsError, match="offload"):
            wc.WgmmaConfig(128, 128, 4, offload=True, **bad)


def _k_loop(sass, end):
    """The consumers' k-loop of an assembled sm90a kernel: from the full-barrier wait before
    the first HGMMA to the first instruction after the last HGMMA that matches ``end``."""
    ins = [x for x in sass.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/", x)]
    first = next(i for i, x in enumerate(ins) if "HGMMA" in x)
    last = max(i for i, x in enumerate(ins) if "HGMMA" in x)
    lo = next(i for i in range(first, 0, -1) if "TRYWAIT" in ins[i])
    hi = next(i for i in range(last, len(ins)) if re.search(end, ins[i]))
    return ins[lo:hi + 1]


@needs_ptxas
@pytest.mark.parametrize("tile,kind,a_km,b_km,epi", [
    ((128, 256, 4), "bf16", True, False, False),
    ((128, 256, 4), "f16", False, True, True)])
def test_streamk_tiles_assemble_without_spills(tile, kind, a_km, b_km, epi):
    """Split tail: per consumer thread, its accumulators stored as partial sums (one 4-byte store
    each, at an immediate offset from one address) and read back by the owner of a split tile
    (one load each), one flag release a warp, the owner's polling; the schedule in 32-bit
    arithmetic (no division routine), and nothing spills."""
    from nbkernels.matmul import wgmma_config

    cfg = wgmma_config.WgmmaConfig(*tile, streamk=True)
    k, asm, sass = _staged_build(cfg, kind, a_km, b_km, epi)
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0, asm.log
    regs = cfg.blocks_m * cfg.bn // 2
    assert len(re.findall(r"\bSTG\.E\s", sass)) >= regs
    assert len(re.findall(r"\bLDG\.E\s", sass)) >= regs
    # the partial sums' stores nearly back to back (with an address calculation each they
    # took 1170 lines): regs of them within 1.25 regs lines
    lines = [x for x in sass.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/\s+\S", x)]
    stg = [i for i, x in enumerate(lines) if re.search(r"\bSTG\.E\s", x)]
    assert min(stg[i + regs - 1] - stg[i] for i in range(len(stg) - regs + 1)) < 1.25 * regs
    # the flag: one release store (a GPU-scope fence, then a strong store), polled by acquire
    # loads; no sequentially consistent fence (cuda.threadfence: MEMBAR.SC.GPU, perf-notes s29)
    assert len(re.findall(r"STG\.E\.64\.STRONG\.GPU", sass)) == 1
    assert re.search(r"LDG\.E\.64\.STRONG\.GPU", sass) and "MEMBAR.ALL.GPU" in sass
    assert "MEMBAR.SC" not in sass and "CALL.REL" not in sass
    assert len(re.findall(r"\bSTSM\.16\.M88\.4\b", sass)) == 4 * (cfg.bn // 64) * cfg.blocks_m
    # the consumers' k-loop (from the full-barrier wait before the first HGMMA to the branch
    # after the last) builds both descriptors on the uniform datapath, as the default's does:
    # with the flag wait as a divergent lane-0 loop it took 16 R2UR and 17 uniform ops, and
    # lost 2-4% (perf-notes s13, s14); with a per-thread warpgroup index, 6 R2UR for the A
    # descriptor, 3-5% (s21)
    loop = _k_loop(sass, r"@!?P\d BRA")  # to the branch after the last HGMMA
    r2ur = sum("R2UR" in x for x in loop)
    uniform = sum(bool(re.search(r"\s(U[A-Z][A-Z0-9.]*|UMOV)\s", x)) for x in loop)
    assert r2ur == 0 and uniform >= 20, (r2ur, uniform, "\n".join(loop))


@needs_ptxas
@pytest.mark.parametrize("tile,kind,a_km,b_km,epi", [
    (dict(bn=256, stages=4, defer=2), "bf16", True, False, False),
    (dict(bn=256, stages=4, defer=2, streamk=True), "f16", False, True, True),
    (dict(bn=128, stages=6, defer=2), "f16", True, True, True),
    (dict(bn=256, stages=3, defer=3), "bf16", True, False, False)])
def test_deferred_stores_run_inside_the_k_loop_without_spills(tile, kind, a_km, b_km, epi):
    """defer: the tile's epilogue stores its first chunks and stages the last ``defer`` (one
    2 KB buffer each per consumer warp); the k-loop holds one chunk's stores (4 shared reads, 4
    global stores of 16 bytes) between the wgmma issue and the wait, and keeps its descriptors
    and counters on the uniform datapath (with a warp barrier in the flush they took 16 R2UR,
    with a per-thread warpgroup index 6);
    nothing spills, the split tail's build included (it spilled 84-96 B while the leftover
    chunks were stored in the epilogue, beside the accumulators)."""
    from nbkernels.matmul import wgmma_config

    cfg = wgmma_config.WgmmaConfig(128, **tile)
    k, asm, sass = _staged_build(cfg, kind, a_km, b_km, epi)
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0, asm.log
    assert len(re.findall(r"\bSTSM\.16\.M88\.4\b", sass)) == 4 * (cfg.bn // 64)
    loop = _k_loop(sass, r"WARPGROUP\.DEPBAR\.LE gsb0, 0x1")  # to the wait after the wgmma
    assert sum("STG.E.EF.128" in x for x in loop) == 4, "\n".join(loop)
    assert sum("LDS.128" in x for x in loop) == 4
    assert sum("R2UR" in x for x in loop) == 0, "\n".join(loop)  # descriptors: uniform (s21)
    assert k.nbk_smem_bytes == cfg.smem_bytes() + 8 * cfg.defer * 2048 <= 232448
    assert "while pend > " in k.nbk_source and "if pend > 0:" in k.nbk_source


def test_defer_config_is_validated_and_explained():
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import wgmma_config as wc

    cfg = wc.WgmmaConfig(128, 256, 4, defer=2)
    assert cfg.key == (128, 256, 4, 8, False, 64, 1, True, False, 1, False, 2)
    assert wc.WgmmaConfig(*cfg.key) == cfg
    assert cfg.staging_bytes() == 2 * wc.WgmmaConfig(128, 256, 4).staging_bytes() == 32768
    assert "stores of 2 of 4 chunks a tile deferred into the next tile's main loop" in str(cfg)
    for bad, msg in [(dict(pingpong=True), "defer .* for staged, cooperative"),
                     (dict(cluster=2), "defer .* for staged"), (dict(staged=False), "defer"),
                     (dict(bm=256, wg_rows=128), "defer .* 64-row consumers"),
                     (dict(offload=True, stages=3), "defer"),
                     (dict(defer=5), r"defer .* must be in \[0, bn / 64 = 4\], got 5"),
                     (dict(defer=-1), "got -1"),
                     (dict(defer=3), "need 246784 bytes of shared memory; a Hopper block has "
                                     "at most 232448")]:
        with pytest.raises(NbkernelsError, match=msg):
            wc.WgmmaConfig(**{"bm": 128, "bn": 256, "stages": 4, "defer": 2, **bad})


def test_streamk_config_is_validated_round_trips_and_keeps_other_sources():
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import wgmma_config as wc, wgmma_kernel as wk
    from nbkernels.matmul.bench_hopper import config_name, parse_config

    cfg = parse_config("128x256x4k")
    assert cfg == wc.WgmmaConfig(128, 256, 4, streamk=True) == wc.WgmmaConfig(*cfg.key)
    assert config_name(cfg) == "128x256x4k" and "split in K halves" in str(cfg)
    assert parse_config("128x256x4d2k") == wc.WgmmaConfig(128, 256, 4, depth=2, streamk=True)
    for bad in (dict(pingpong=True), dict(cluster=2), dict(offload=True), dict(bm=256, wg_rows=128)):
        with pytest.raises(NbkernelsError, match="streamk"):
            wc.WgmmaConfig(**{"bm": 128, "bn": 128, "stages": 4, **bad}, streamk=True)
    src = wk.build_kernel(cfg, "bf16", True, False).nbk_source
    assert "ws, flags, nonce, extra" in src and "I.st_release_gpu_s64" in src
    plain = wk.build_kernel(wc.DEFAULT, "bf16", True, False).nbk_source
    assert "skv" not in plain and "nonce" not in plain and "range(ktiles)" in plain


def test_split_tail_takes_a_last_wave_of_at_most_half_the_blocks():
    from nbkernels.matmul.wgmma_kernel import split_tail, streamk_grid

    assert split_tail(1376, 132, 64) == 56  # 4096x11008 in 128x256 tiles: 10 waves and 56
    assert split_tail(2048, 132, 64) == 0 and split_tail(512, 132, 64) == 0  # 68, 116 > 66
    assert split_tail(264, 132, 64) == 0  # whole waves
    assert split_tail(1376, 132, 1) == 0  # one k-tile: nothing to halve
    assert streamk_grid(16, 132) == 32 and split_tail(16, 32, 2) == 16  # every tile split
    assert streamk_grid(100, 132) == 100 and split_tail(100, 100, 64) == 0
    assert streamk_grid(1376, 132) == 132
    assert streamk_grid(4, 3) == 3 and split_tail(4, 3, 4) == 1  # the simulator's 3 blocks
    assert streamk_grid(1, 3) == 2 and split_tail(1, 2, 3) == 1
    assert split_tail(8, 3, 5) == 0


@pytest.mark.parametrize("m,n,k,tile,split", [
    (4096, 11008, 4096, None, True),  # 1376 tiles: a last wave of 56 (measured +1.5%)
    (2304, 2304, 8192, None, True),  # 162 tiles: 30 (+21%)
    (3072, 3072, 8192, None, True),  # 144 tiles: 12 (+13%)
    (4096, 11008, 2048, None, True),  # halves of 16 k-tiles
    (4096, 11008, 1024, None, False),  # halves of 8: not measured to pay
    (4096, 4096, 4096, None, False),  # 512 tiles: a last wave of 116, more than half
    (8192, 8192, 1024, None, False),  # 2048 tiles: 68
    (1920, 1024, 8192, None, False),  # 60 tiles, fewer than the SMs: not measured
    (2304, 2304, 8192, (128, 128, 6, 8, True), False),  # a ping-pong tile cannot split
])
def test_split_tail_is_chosen_where_measured_to_pay(m, n, k, tile, split):
    from nbkernels.matmul import wgmma_config as wc

    cfg = wc.WgmmaConfig(*tile) if tile else wc.choose(m, n, 1, 132, 227 * 1024)
    tiles = -(-m // cfg.bm) * -(-n // cfg.bn)
    got = wc.with_split_tail(cfg, tiles, 132, k)
    assert got.streamk == split
    assert got == (wc.WgmmaConfig(128, 256, 4, streamk=True, defer=2) if split else cfg)


@pytest.mark.parametrize("m,n,batch,want", [
    (8192, 8192, 1, wc_default := (128, 256, 4, 8, False, 64, 1, True, False, 1, False, 2)),
    (4096, 4096, 1, wc_default),  # 512 tiles
    (128 * 133, 256, 1, wc_default),  # one tile more than SMs: a block has a next tile
    (128 * 132, 256, 1, (128, 256, 4, 8, False, 64)),  # one tile per SM: nothing to defer into
    (2048, 2048, 1, (128, 256, 4, 8, False, 64)),  # 128 tiles
    (2048, 2048, 2, wc_default),  # a batch of two: 256 tiles
    (1024, 2048, 1, (128, 128, 6, 8, False, 64)),  # 64 tiles: the small tile, never deferred
])
def test_default_defers_stores_only_where_a_block_has_a_next_tile(m, n, batch, want):
    from nbkernels.matmul import wgmma_config as wc

    assert wc.choose(m, n, batch, 132, 232448).key == want
    # a device whose blocks cannot hold the deferred staging takes the default without it
    assert wc.choose(8192, 8192, 1, 132, 220 * 1024).key == (128, 256, 4, 8, False, 64)


def test_explain_says_the_split_tail_was_chosen_and_keeps_the_callers_tile(monkeypatch):
    import numpy as np

    import nbkernels
    from nbkernels.matmul import api
    from nbkernels.matmul.wgmma_config import WgmmaConfig

    monkeypatch.setattr(api, "device_limits", lambda: (132, 227 * 1024))
    a, b = np.empty((2304, 8192), np.float16), np.empty((8192, 2304), np.float16)
    auto = nbkernels.explain(a, b, variant="sm90a")
    assert "the last wave's tiles split in K halves" in auto
    assert "split tail: the last 30 of 162 tiles" in auto
    given = nbkernels.explain(a, b, variant="sm90a", tile=WgmmaConfig(128, 256, 4))
    assert "split" not in given and "tile given by the caller" in given
    sq = np.empty((4096, 4096), np.float16)  # 512 tiles: a last wave of 116, no split
    square = nbkernels.explain(sq, sq, variant="sm90a")
    assert "variant: sm90a" in square and "split" not in square


def test_streamk_nonces_differ_per_call_and_are_never_zero():
    from nbkernels.matmul import run

    got = [int(run._nonce()) for _ in range(1000)]
    assert len(set(got)) == 1000 and 0 not in got


def test_every_candidate_tile_has_room_for_the_staged_epilogue():
    from nbkernels.matmul import wgmma_config
    from nbkernels.smem import SM90_OPTIN

    for cfg in wgmma_config.CANDIDATES:
        assert cfg.stages_in(SM90_OPTIN), cfg


def test_staged_epilogue_refuses_what_it_cannot_store():
    from nbkernels.matmul import wgmma_kernel

    with pytest.raises(ValueError, match="16-bit results"):
        wgmma_kernel.staged_epilogue(32, "f32", None, 0)
    with pytest.raises(ValueError, match="64-column chunks"):
        wgmma_kernel.staged_epilogue(12, "bf16", None, 0)


def test_guarded_tiles_refuse_a_staged_build():
    """staged=False (the guarded stores, for comparison) is not staged, and a staged build of
    it is refused; every candidate tile stages by default."""
    from nbkernels.matmul import wgmma_config as wc, wgmma_kernel

    tile = wc.WgmmaConfig(128, 256, 4, staged=False)
    assert not tile.staged and tile.key == (128, 256, 4, 8, False, 64, 1, False)
    assert wc.WgmmaConfig(*tile.key) == tile
    with pytest.raises(ValueError, match="no staged epilogue"):
        wgmma_kernel.build_kernel(tile, "bf16", True, False, None, 0, 2)
    assert all(c.staged for c in wc.CANDIDATES)


@pytest.mark.parametrize("args,ok", [
    ((192, 256, 3), False),  # four warpgroups: 128 at launch, ptxas asked for 154
    ((256, 192, 3), False),  # five: 96 at launch, ptxas asked for 122
    ((256, 256, 3), False),
    ((192, 192, 3), True),  # 96 accumulators under 128: assembled without spills
    ((256, 128, 4), True),
    ((128, 256, 4), True),
    ((64, 256, 5, 8, True), True),  # ping-pong: 128 accumulators under 168
    ((256, 128, 4, 8, False, 128), True)])
def test_tiles_whose_accumulators_the_launch_cap_cannot_compile_are_refused(args, ok):
    """A tile whose consumers hold more accumulators than the block's launch-time register cap
    leaves room for is refused with the numbers (ptxas failed on it with "Insufficient
    registers"); every candidate the dispatch knows passes."""
    from nbkernels.errors import NbkernelsError
    from nbkernels.matmul import wgmma_config as wc

    if ok:
        cfg = wc.WgmmaConfig(*args)
        assert cfg.accumulator_registers() + wc.ENTRY_SPARE <= cfg.entry_registers()
    else:
        with pytest.raises(NbkernelsError, match=r"threads cap a thread at \d+ registers at "
                                                 r"launch, and ptxas needs \d+"):
            wc.WgmmaConfig(*args)
    for cfg in wc.CANDIDATES:
        assert cfg.accumulator_registers() + wc.ENTRY_SPARE <= cfg.entry_registers(), cfg


@needs_ptxas
def test_the_largest_tile_the_launch_cap_allows_assembles():
    """192x192 (four warpgroups, 96 accumulators under a cap of 128): the rule's edge, built."""
    from nbkernels.matmul import wgmma_config

    k, asm, sass = _staged_build(wgmma_config.WgmmaConfig(192, 192, 3), "bf16", True, False,
                                 False)
    assert asm.spill_stores == asm.spill_loads == 0, asm.log
    assert re.search(r"HGMMA\.64x192x16\.F32\.BF16", sass)
