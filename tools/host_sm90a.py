"""Host time per repeat call of nbkernels.gemm on torch tensors through the sm90a kernel
(device machine): wall time per call over a loop where the GPU work (1024^3) is shorter than
the host's, for the same arrays, for 4 pairs in turn, with out= given, and a cProfile of the
repeat path. ``python tools/host_sm90a.py``"""
import cProfile
import pstats
import statistics
import time

import torch

import nbkernels


def per_call(fn, calls=300):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(runs)


n = 1024
pairs = [(torch.randn(n, n, device="cuda").bfloat16(), torch.randn(n, n, device="cuda").bfloat16())
         for _ in range(4)]
out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
a, b = pairs[0]
kw = {"variant": "sm90a"}
print(nbkernels.explain(a, b, **kw).splitlines()[0])
turn = [0]


def rotate():
    x, y = pairs[turn[0] % 4]
    turn[0] += 1
    nbkernels.gemm(x, y, **kw)


rows = {"same arrays": per_call(lambda: nbkernels.gemm(a, b, **kw)),
        "same arrays, out=": per_call(lambda: nbkernels.gemm(a, b, out=out, **kw)),
        "4 pairs in turn": per_call(rotate),
        "torch.matmul": per_call(lambda: torch.matmul(a, b)),
        "torch.matmul, out=": per_call(lambda: torch.matmul(a, b, out=out))}
for k, v in rows.items():
    print(f"{k:24s} {v:7.1f} us/call")
prof = cProfile.Profile()
prof.enable()
for _ in range(500):
    nbkernels.gemm(a, b, **kw)
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats("tottime").print_stats(14)
