"""Hopper GEMM speed: the sm90a kernel against cuBLAS, Triton and the sm_80-class kernel, in one
process: ``python -m nbkernels.matmul.bench_hopper``.

CUDA events around each call after warm-up, the call queued behind a spin kernel so that the
host's overhead stays outside the events and is reported apart (``host us``; ``bench._time``,
shared with the sm_80 benchmark: torch and CuPy both work on the legacy default stream here),
medians, input sets rotated past L2, cuBLAS through ``torch.matmul`` and a Triton
matmul (the tutorial's kernel, autotuned over its Hopper configurations) on the same buffers
in the same run, each timed in two passes, the second in reverse order (``bench.abba``: at
8192^3 a kernel timed right after cuBLAS ran slower). FLOPs = 2*M*N*K. Each result is also
checked against cuBLAS's. ``--prewarm`` first compiles the sm90a configurations in parallel
processes (15 s each on one core).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys

SHAPES = {"key": [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                  (4096, 11008, 4096), (8192, 8192, 1024)],
          "sweep": [(s, s, s) for s in (128, 256, 512, 1024, 2048, 4096, 8192)]
          + [(16, 4096, 4096), (4096, 11008, 4096), (8192, 8192, 1024)]}


def _triton_matmul():
    """The Triton tutorial's matmul (grouped tile order, fp32 accumulation), autotuned."""
    import torch
    import triton
    import triton.language as tl

    cfgs = [triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
            triton.Config({"BM": 128, "BN": 128, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
            triton.Config({"BM": 256, "BN": 128, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
            triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=4, num_warps=8)]

    @triton.autotune(configs=cfgs, key=["M", "N", "K"])
    @triton.jit
    def kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, G: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = G * npn
        first = (pid // group) * G
        gsz = min(npm - first, G)
        pm = first + (pid % group) % gsz
        pn = (pid % group) // gsz
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            x = tl.load(pa, mask=rk[None, :] < K - k * BK, other=0.0)
            y = tl.load(pb, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(x, y, acc)
            pa += BK * sak
            pb += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        pc = c + cm[:, None] * scm + cn[None, :] * scn
        tl.store(pc, acc.to(c.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))

    def matmul(x, y):
        M, K = x.shape
        N = y.shape[1]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
        kernel[grid](x, y, out, M, N, K, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                     out.stride(0), out.stride(1))
        return out

    return matmul


def parse_config(text):
    """``BMxBNxSTAGES`` with optional suffixes: ``p`` ping-pong consumers, ``w`` cooperative
    consumers of 128 rows each (two m64 wgmma blocks per consumer), then ``rG``: rasterization
    groups of G tile-rows instead of 8 (``128x256x4r16``), then ``c2``: clusters of
    two blocks sharing B tiles by TMA multicast (``128x256x4c2``, ``128x128x6pc2``), then
    ``g``: the guarded-store epilogue instead of the staged one (``128x256x4g``; ``s``, the
    default, is accepted) or ``o``: the staged tile stored by the producer's warps
    (``128x256x3o``), then ``dD``: D k-tiles of wgmma left in flight (``128x128x6pd2``), then
    ``k``: the split tail (the last wave's tiles in K halves, ``128x256x4k``), then ``eD``: the
    stores of D chunks a tile deferred into the next tile's k-loop (``128x256x4e2``)."""
    import re

    from ..errors import NbkernelsError
    from .wgmma_config import WgmmaConfig

    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)([pw]?)(?:r(\d+))?(?:c(\d+))?([sgo]?)(?:d(\d+))?(k?)"
                     r"(?:e(\d+))?", text)
    if not m:
        raise NbkernelsError(f"--configs: expected BMxBNxSTAGES[p|w][rG][c2][g|o][dD][k][eD] (e.g. "
                             f"128x256x4c2), got {text!r}")
    bm, bn, st = (int(v) for v in m.group(1, 2, 3))
    flag, group, cluster = m.group(4), int(m.group(5) or 8), int(m.group(6) or 1)
    return WgmmaConfig(bm, bn, st, group, flag == "p", 128 if flag == "w" else 64, cluster,
                       staged=m.group(7) != "g", offload=m.group(7) == "o",
                       depth=int(m.group(8) or 1), streamk=m.group(9) == "k",
                       defer=int(m.group(10) or 0))


def config_name(cfg):
    return (f"{cfg.bm}x{cfg.bn}x{cfg.stages}" + ("p" if cfg.pingpong else "")
            + ("w" if cfg.wg_rows == 128 else "") + (f"r{cfg.group_m}" if cfg.group_m != 8 else "")
            + (f"c{cfg.cluster}" if cfg.cluster > 1 else "")
            + ("" if cfg.staged else "g") + ("o" if cfg.offload else "")
            + (f"d{cfg.depth}" if cfg.depth != 1 else "") + ("k" if cfg.streamk else "")
            + (f"e{cfg.defer}" if cfg.defer else ""))


def _prewarm_one(job):
    from . import run, wgmma_config

    cfg_key, kind, a_km, b_km = job
    cfg = wgmma_config.WgmmaConfig(*cfg_key)
    run.prebuild_sm90a(cfg, kind, a_km, b_km, 2 if cfg.staged else True)  # as the bench's D
    return job


def prewarm(configs, kinds=("bf16", "f16"), layouts=((True, False), (True, True)), procs=14):
    """Compile every (config, kind, layout) in parallel processes into the disk cache."""
    import multiprocessing as mp

    jobs = [(c.key, k, a, b) for c in configs for k in kinds for a, b in layouts]
    with mp.get_context("spawn").Pool(min(procs, len(jobs))) as pool:
        for _ in pool.imap_unordered(_prewarm_one, jobs):
            pass
    return len(jobs)


def run(shapes, dtypes, configs, reps=20, triton=True, sm80=True):
    import torch

    import nbkernels
    from .bench import abba, rotation_count

    rng = torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    tri = _triton_matmul() if triton else None
    rows = []
    for dtype in dtypes:
        tdt = getattr(torch, dtype)
        for m, n, k in shapes:
            count = rotation_count((m * k + k * n) * 2, l2)
            sets = [(torch.randn(m, k, device="cuda", generator=rng).to(tdt),
                     torch.randn(k, n, device="cuda", generator=rng).to(tdt)) for _ in range(count)]
            flops = 2 * m * n * k
            row = {"dtype": dtype, "m": m, "n": n, "k": k}
            ref = torch.matmul(*sets[0]).double()
            jobs = {"cublas": (torch.matmul, sets)}
            for cfg in configs:
                label = "nbk" if cfg is None else f"nbk[{config_name(cfg)}]"
                kw = {} if cfg is None else {"variant": "sm90a", "tile": cfg}
                got = nbkernels.gemm(*sets[0], **kw).double()
                row[label + "_err"] = float((got - ref).norm() / ref.norm())
                jobs[label] = (functools.partial(nbkernels.gemm, **kw), sets)
                if cfg is None:
                    row["variant"] = nbkernels.explain(*sets[0]).split("variant: ")[1].split()[0]
            if sm80:
                jobs["sm80"] = (functools.partial(nbkernels.gemm, variant="sm80"), sets)
            if tri is not None:
                jobs["triton"] = (tri, sets)
            dev, host = abba(jobs, reps)  # in both orders: no job always runs after cuBLAS
            for label in jobs:
                row[label] = flops / dev[label] / 1e12
                row[label + "_passes"] = [flops / t / 1e12 for t in abba.passes[label]]
                if label == "cublas" or label.startswith("nbk"):
                    row[label + "_host_us"] = host[label] * 1e6
            rows.append(row)
            _print_row(row)
            del sets
            torch.cuda.empty_cache()
    return rows


def _print_row(r):
    parts = [f"{r['dtype']:8s} {r['m']:>5}x{r['n']:>5}x{r['k']:>5}"]
    for key in r:
        if key in ("dtype", "m", "n", "k", "variant") or key.endswith(("_err", "_us", "_passes")):
            continue
        parts.append(f"{key}={r[key]:6.1f}")
    parts.append(f"nbk/cublas={r['nbk'] / r['cublas']:.2f}")
    if "triton" in r:
        parts.append(f"nbk/triton={r['nbk'] / r['triton']:.2f}")
    parts.append("passes nbk {:.0f}/{:.0f} cuBLAS {:.0f}/{:.0f}".format(
        *r["nbk_passes"], *r["cublas_passes"]))
    parts.append(f"[{r.get('variant', '?')}] err={r['nbk_err']:.1e}  host us: nbk "
                 f"{r['nbk_host_us']:.0f} cuBLAS {r['cublas_host_us']:.0f}")
    print("  ".join(parts), flush=True)


def main(argv=None):
    from . import wgmma_config

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="key",
                    help="key, sweep, or N or MxNxK items, comma-separated")
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--configs", default="", help="sm90a tiles to time besides the default, "
                    "e.g. 128x256x3,128x128x6p,256x128x4w,128x256x4c2,128x256x4g (bm x bn x "
                    "stages, p: ping-pong, w: 128-row cooperative consumers, rG: rasterization "
                    "groups of G tile-rows (default 8), c2: clusters of two blocks sharing B by "
                    "TMA multicast, g: the guarded-store epilogue, o: stores by the producer's warps, "
                    "dD: D k-tiles of wgmma in flight, k: the last partial wave's tiles split "
                    "in K halves, eD: the stores of D chunks a tile deferred into the next "
                    "tile's k-loop)")
    ap.add_argument("--prewarm", action="store_true")
    ap.add_argument("--prewarm-only", action="store_true",
                    help="build the configurations for all four operand layouts, then stop")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--no-sm80", action="store_true")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--settle", type=float, default=None, metavar="S",
                    help="seconds each job runs back to back before it is timed (default "
                         "bench.SETTLE_S)")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    from .bench import parse_shape

    shapes = SHAPES.get(args.shapes) or [parse_shape(s, "--shapes")
                                         for s in args.shapes.split(",")]
    extra = [parse_config(c) for c in args.configs.split(",") if c]
    if args.prewarm or args.prewarm_only:
        import time

        t0 = time.time()
        lay = ((True, False), (True, True), (False, False), (False, True)) if args.prewarm_only \
            else ((True, False), (True, True))
        n = prewarm([wgmma_config.DEFAULT, wgmma_config.SMALL] + extra, layouts=lay)
        print(f"prewarmed {n} sm90a builds in {time.time() - t0:.0f} s", flush=True)
        if args.prewarm_only:
            return 0
    if args.settle is not None:
        from . import bench

        bench.SETTLE_S = args.settle
    rows = run(shapes, args.dtypes.split(","), [None] + extra, args.reps,
               not args.no_triton, not args.no_sm80)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
