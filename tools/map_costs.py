"""Host cost of the sm90a GEMM's tensor maps for operands at new addresses (perf-notes s15).

    python tools/map_costs.py

Prints, in microseconds (medians):
  * ``encode``: one ``tensormap.encode_tiled`` (cuTensorMapEncodeTiled through cuda-bindings);
  * ``store miss``: a new entry written to the map store (``MapStore.address``), with the
    device idle, and with 20 ms of work queued on the legacy default stream before it (does
    the copy wait for that work?);
  * ``encoder``: the map cache's per-geometry encoder (session 19);
  * gemm calls of 2048^3 f16 on CuPy arrays, host time per call with the GPU kept busy by
    queued work: the same operands each call, and a new ``a`` each call (its map encoded and
    stored, as for a fresh activation with the same weight).
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
    store = tensormap.store(0, 128)
    blob = tensormap.encode_tiled(ptr, *args, swizzle=128).bytes
    keys = iter(range(10**9))
    print(f"store miss, idle: {med(lambda: store.address(('cost', next(keys)), lambda: blob)):.1f} us")

    def queued_miss():
        sleep_ms(20)
        t = time.perf_counter()
        store.address(("cost", next(keys)), lambda: blob)
        dt = time.perf_counter() - t
        cupy.cuda.Device().synchronize()
        return dt

    ts = [queued_miss() for _ in range(10)]
    print(f"store miss, 20 ms queued before it: {statistics.median(ts) * 1e6:.1f} us")

    from cuda.bindings import driver as drv  # the store's copy before session 19

    dev, host = store.slabs[-1][0], store.slabs[-1][1][:128]

    def legacy_copy():
        sleep_ms(20)
        t = time.perf_counter()
        drv.cuMemcpyHtoD(dev, host.ctypes.data, 128)
        dt = time.perf_counter() - t
        cupy.cuda.Device().synchronize()
        return dt

    ts = [legacy_copy() for _ in range(10)]
    print(f"cuMemcpyHtoD (the store's copy before), 20 ms queued before it: "
          f"{statistics.median(ts) * 1e6:.1f} us")

    if hasattr(tensormap, "encoder"):  # (a tree before session 19 has none)
        enc = tensormap.encoder(*args, swizzle=128)
        print(f"encoder (the map cache's, per geometry): {med(lambda: enc(ptr)):.1f} us")

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
          f"a new a each call (its map encoded and stored) {new:.1f} us")


if __name__ == "__main__":
    main()
