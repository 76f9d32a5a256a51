"""What a launch's parameter count costs the host (device machine; perf-notes h8).

A repeat row call launches a kernel of 53 parameters (rms_norm: five numba arrays of seven
fields each, a float32 workspace array, twelve scalars); the empty launch issue #5 measures
against has one. Times, per launch in a tight loop (median of 5 loops of 2000 after warm-up),
CuPy's Cython ``launchKernel`` on empty kernels of 1, 16, 32, 53 and 64 eight-byte parameters,
each passed as ``kernelParams`` (a ``void*[]``, one pointer per parameter: what nbkernels does)
and as one packed buffer through ``extra`` (``CU_LAUNCH_PARAM_BUFFER_POINTER``), and the
recorded rms_norm replay's own bound launch beside them. ``python tools/launch_params.py``
"""
import ctypes

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16
from nbkernels.rows import host

from host_parts import per_call  # tools/ (the script's own directory)

COUNTS = (1, 16, 32, 53, 64)


def kernel(count):
    params = ", ".join(f"unsigned long long p{i}" for i in range(count))
    k = cupy.RawKernel(f'extern "C" __global__ void nbk_p{count}({params}) {{}}', f"nbk_p{count}")
    k.compile()
    return k.kernel.ptr


def main():
    launch_kernel = cupy.cuda.driver.launchKernel
    stream = int(cupy.cuda.get_current_stream().ptr)
    rows, kernels = [], {}
    for count in COUNTS * 2:  # two rounds: the host drifts
        if count not in kernels:
            kernels[count] = kernel(count)
        f = kernels[count]
        slots = [ctypes.c_uint64(i) for i in range(count)]
        ptrs = (ctypes.c_void_p * count)(*[ctypes.addressof(s) for s in slots])
        buf = (ctypes.c_uint64 * count)(*range(count))
        size = ctypes.c_size_t(ctypes.sizeof(buf))
        extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 0)
        pa, ea = ctypes.addressof(ptrs), ctypes.addressof(extra)
        a = per_call(lambda: launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, stream, pa, 0))
        b = per_call(lambda: launch_kernel(f, 1, 1, 1, 32, 1, 1, 0, stream, 0, ea))
        rows.append((count, a, b))
    rng = np.random.default_rng()
    x = cupy.asarray(rng.standard_normal((1, 4096)).astype(BF16))
    w = cupy.asarray(rng.standard_normal(4096).astype(BF16))
    out = cupy.empty_like(x)
    for _ in range(3):  # the third call replays
        nbkernels.rms_norm(x, w, out=out)
    named = {"x": x, "weight": w, "residual": None, "out": out, "residual_out": None}
    from nbkernels.rows import rms_norm_kernel

    key_fn = getattr(rms_norm_kernel, "_KEY", None)  # the generated key since session 45
    key = key_fn(tuple(named.values()), (float, None))[0] if key_fn else \
        getattr(host, "fast_key")("rms_norm", named, (float, None))[0]  # (older trees)
    go = host._FAST[key].fire.__globals__["go0"]
    raw = cupy.RawKernel('extern "C" __global__ void nbk_empty(float* p) {}', "nbk_empty")
    buf = cupy.empty(1, cupy.float32)
    for _ in range(2):  # two rounds: the host drifts
        print(f"empty launch, CuPy RawKernel: {per_call(lambda: raw((1,), (32,), (buf,))):.2f} us")
        print(f"rms_norm replay's bound launch (53 parameters): {per_call(lambda: go(stream)):.2f}"
              " us")
        t = per_call(lambda: nbkernels.rms_norm(x, w, out=out))
        print(f"rms_norm 1x4096 bf16 out=: {t:.2f} us")
    print("| parameters | kernelParams us | extra buffer us |")
    print("| --- | --- | --- |")
    for k, (count, a, b) in enumerate(rows):
        print(f"| {count} (round {k // len(COUNTS) + 1}) | {a:.2f} | {b:.2f} |")


if __name__ == "__main__":
    main()
