"""Host cost of the sm90a GEMM's tensor maps when D's map is new on each call (perf-notes s15).

    python tools/map_costs.py

Prints, in microseconds (medians):
  * ``encode``: one ``tensormap.encode_tiled`` (cuTensorMapEncodeTiled through cuda-bindings);
  * ``store miss``: a new entry written to the map store (``MapStore.address``), with the
    device idle, and with 20 ms of work queued on the legacy default stream before it (does
    the copy wait for that work?);
  * gemm calls of 2048^3 bf16 on CuPy arrays: results dropped at once (the pool hands the same
    address back: D's map is found) against results kept (a new address, a new map, each call),
    host time per call with the GPU kept busy by the queue.
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

    rng = cupy.random.default_rng()
    a = rng.standard_normal((2048, 2048), dtype=cupy.float32).astype(cupy.float16)
    b = rng.standard_normal((2048, 2048), dtype=cupy.float32).astype(cupy.float16)
    for _ in range(3):
        nbkernels.gemm(a, b)
    cupy.cuda.Device().synchronize()
    kept = []

    def dropped():
        nbkernels.gemm(a, b)

    def keep():
        kept.append(nbkernels.gemm(a, b))

    for name, f in (("dropped", dropped), ("kept", keep), ("dropped", dropped), ("kept", keep)):
        sleep_ms(50)  # the calls below queue behind this: their host time is what is timed
        t = med(f, 40)
        cupy.cuda.Device().synchronize()
        print(f"gemm 2048^3 f16, results {name}: {t:.1f} us host per call")
        kept.clear()


if __name__ == "__main__":
    main()
