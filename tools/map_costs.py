"""Host cost of the sm90a GEMM's tensor maps for operands at new addresses (perf-notes s15).

    python tools/map_costs.py

Prints, in microseconds (medians):
  * ``encode``: one ``tensormap.encode_tiled`` (cuTensorMapEncodeTiled through cuda-bindings);
  * ``encoder``: the map cache's per-geometry encoder (session 19);
  * ``map cache``: the bytes of a pair of maps for a repeat call, on a hit and for a new
    ``a`` (one map encoded);
  * gemm calls of 2048^3 f16 on CuPy arrays, host time per call with the GPU kept busy by
    queued work: the same operands each call, and a new ``a`` each call (its map encoded, as
    for a fresh activation with the same weight; since session 33 the maps travel in the
    launch's parameters, before that each new one was copied to a device store).
"""
import statistics
import time

import cupy
import numpy as np

import nbkernels
from nbkernels import tensormap


def med(f, n=50):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def sleep_ms(ms):
    """Queue ~ms of spinning on the legacy default stream."""
    import torch

    torch.cuda._sleep(int(ms * 1.8e6))  # cycles at ~1.8 GHz


def main():
    buf = cupy.empty((4096, 4096), cupy.float16)
    ptr = buf.data.ptr
    args = (np.dtype(np.float16), (1, 4096, 4096), (4096 * 4096 * 2, 8192, 2), (1, 16, 64))
    print(f"encode: {med(lambda: tensormap.encode_tiled(ptr, *args, swizzle=128)):.1f} us")
    if hasattr(tensormap, "encoder"):  # (a tree before session 19 has none)
        enc = tensormap.encoder(*args, swizzle=128)
        print(f"encoder (the map cache's, per geometry): {med(lambda: enc(ptr)):.1f} us")

    from nbkernels.matmul import wgmma_kernel as wk  # what a repeat call on a new a runs

    cache = wk.MapCache((args, args))
    fresh_ptrs = iter(range(ptr + 4096, ptr + 4096 * 10**6, 4096))
    print(f"map cache: hit {med(lambda: cache.host_ptr(ptr, ptr)):.1f} us, miss on a new a "
          f"{med(lambda: cache.host_ptr(next(fresh_ptrs), ptr)):.1f} us")

    rng = cupy.random.default_rng()
    b = rng.standard_normal((2048, 2048), dtype=cupy.float32).astype(cupy.float16)
    fresh = [rng.standard_normal((2048, 2048), dtype=cupy.float32).astype(cupy.float16)
             for _ in range(120)]  # 120 operands never seen by the map cache
    a = fresh.pop()
    for _ in range(3):
        nbkernels.gemm(a, b)
    cupy.cuda.Device().synchronize()
    sleep_ms(100)  # the calls below queue behind this: their host time is what is timed
    same = med(lambda: nbkernels.gemm(a, b), 40)
    new = med(lambda: nbkernels.gemm(fresh.pop(), b), 40)
    busy = not cupy.cuda.Stream.null.done
    cupy.cuda.Device().synchronize()
    print(f"gemm 2048^3 f16 host per call, GPU busy={busy}: same a {same:.1f} us, "
          f"a new a each call (its map encoded) {new:.1f} us")


if __name__ == "__main__":
    main()
