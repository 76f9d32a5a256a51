"""Kernels for Nsight Compute: each is warmed up (compiled, tensor maps cached) outside the
profiled range, then launched once between cudaProfilerStart/Stop, so that

    ncu --profile-from-start off --section SpeedOfLight ... python3 tools/profile_ncu.py gemm 4096

profiles exactly one launch of each. ``gemm N|MxNxK [cfg ...]``: the sm90a kernel (default
config, then each ``BMxBNxSTAGES[p]``) and cuBLAS (torch.matmul), bf16 N^3 or M x N x K.
``dgemm N [tile ...]``: the float64 kernel (default tile, then each tile as ``TileConfig`` fields, e.g.
``128,64,128,2,2,4,min_blocks=2,mma_k=8``) and cuBLAS DGEMM, float64 N^3. ``rows R N op ...``:
the row kernels on bf16 R x N (ops: rms, rms_res, layer_norm, softmax, swiglu).
"""
import sys

import cupy
import torch

import nbkernels
from nbkernels.matmul.bench_hopper import parse_config


def _shape(spec):
    """``N`` (N^3) or ``MxNxK``."""
    dims = [int(v) for v in spec.split("x")]
    return dims * 3 if len(dims) == 1 else dims


def gemm(spec, *cfgs):
    m, n, k = _shape(spec)
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(k, n, device="cuda").bfloat16()
    calls = [lambda: nbkernels.gemm(a, b, variant="sm90a")]
    calls += [lambda c=c: nbkernels.gemm(a, b, variant="sm90a", tile=c)
              for c in map(parse_config, cfgs)]
    calls += [lambda: torch.matmul(a, b)]
    return calls


def dgemm(n, *tiles):
    from nbkernels.matmul.bench import parse_tiles

    a = torch.randn(n, n, device="cuda", dtype=torch.float64)
    b = torch.randn(n, n, device="cuda", dtype=torch.float64)
    cfgs = [None] + parse_tiles(";".join(tiles)) if tiles else [None]
    calls = [lambda c=c: nbkernels.gemm(a, b, tile=c) for c in cfgs]
    return calls + [lambda: torch.matmul(a, b)]


def rows(r, n, *ops):
    x = torch.randn(r, n, device="cuda").bfloat16()
    res = torch.randn(r, n, device="cuda").bfloat16()
    w = torch.randn(n, device="cuda").bfloat16()
    bias = torch.randn(n, device="cuda").bfloat16()
    table = {"rms": lambda: nbkernels.rms_norm(x, w),
             "rms_res": lambda: nbkernels.rms_norm(x, w, residual=res),
             "layer_norm": lambda: nbkernels.layer_norm(x, w, bias),
             "softmax": lambda: nbkernels.softmax(x),
             "swiglu": lambda: nbkernels.swiglu(x, res)}
    return [table[o] for o in ops]


def main(argv):
    what, *args = argv
    if what == "rows":
        calls = rows(int(args[0]), int(args[1]), *args[2:])
    else:
        calls = gemm(*args) if what == "gemm" else dgemm(int(args[0]), *args[1:])
    for f in calls:
        for _ in range(3):
            f()
    torch.cuda.synchronize()
    cupy.cuda.runtime.profilerStart()
    for f in calls:
        f()
        torch.cuda.synchronize()
    cupy.cuda.runtime.profilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
