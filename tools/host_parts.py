"""What each piece of a small call's host path costs (device machine; perf-notes r9).

Times, per call of a tight loop (median of 5 loops of 2000 after warm-up), every piece the
repeat path of ``nbkernels.rms_norm`` and ``nbkernels.gemm`` runs on CuPy arrays, beside the
floor they are judged against (an empty kernel through CuPy's RawKernel) and the whole calls.
Launch pieces queue empty kernels, so the loops synchronize at their end only.
``python tools/host_parts.py [--calls]``: ``--calls`` times the whole calls and the empty
launch only (it runs on older trees too: an A/B of the repeat path, perf-notes r9).
"""
import os
import statistics
import sys
import time

import cupy
import numpy as np

import nbkernels
from nbkernels import arrays, launch
from nbkernels.arrays import BF16
from nbkernels.rows import host

CALLS = sys.argv[1:] == ["--calls"]
if not CALLS:
    from nbkernels import repeat


def per_call(fn, n=2000):
    for _ in range(200):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        cupy.cuda.get_current_stream().synchronize()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def main():
    from cuda.bindings import driver as drv

    rng = np.random.default_rng()
    raw = cupy.RawKernel('extern "C" __global__ void nbk_empty(float* p) {}', "nbk_empty")
    buf = cupy.empty(1, cupy.float32)
    raw((1,), (32,), (buf,))
    fint = raw.kernel.ptr
    fobj = drv.CUfunction(fint)
    packed = launch.PackedArgs([buf.data.ptr], [launch.VOIDP])
    s = int(cupy.cuda.get_current_stream().ptr)
    sobj = drv.CUstream(s)
    x = cupy.asarray(rng.standard_normal((1, 4096)).astype(BF16))
    w = cupy.asarray(rng.standard_normal(4096).astype(BF16))
    out = cupy.empty_like(x)
    for _ in range(3):  # a kernel's first call is not recorded: the third one replays
        nbkernels.rms_norm(x, w, out=out)
        nbkernels.rms_norm(x, w)
    named = {"x": x, "weight": w, "residual": None, "out": out, "residual_out": None}
    a = cupy.asarray(rng.standard_normal((128, 128)).astype(BF16))
    b = cupy.asarray(rng.standard_normal((128, 128)).astype(BF16))
    c = cupy.empty((128, 128), BF16)
    for _ in range(3):
        nbkernels.gemm(a, b, out=c)
        nbkernels.gemm(a, b)
    dev = x.device.id
    if not CALLS:  # the recorded repeat calls, to time their pieces apart
        from nbkernels.matmul import fast

        from nbkernels.rows.rms_norm_kernel import _KEY as rows_key

        rargs = tuple(named.values())
        rkey, rptrs = rows_key(rargs, (float, None))
        rrep = host._FAST[rkey]
        gkey, gptrs = fast.key_of(a, b, None, c, 1, 0, None, None, None)
        glz = fast._FAST[gkey]
        cupy_alloc = repeat.framework_ops(repeat.CUPY, dev)[0]  # what a replay allocates with
    parts = [
        ("empty launch, CuPy RawKernel", lambda: raw((1,), (32,), (buf,))),
        ("cuLaunchKernel (cuda-bindings), int function and stream",
         lambda: drv.cuLaunchKernel(fint, 1, 1, 1, 32, 1, 1, 0, s, packed.address, 0)),
        ("cuLaunchKernel (cuda-bindings), CUfunction and int stream",
         lambda: drv.cuLaunchKernel(fobj, 1, 1, 1, 32, 1, 1, 0, s, packed.address, 0)),
        ("cuLaunchKernel (cuda-bindings), CUfunction and CUstream",
         lambda: drv.cuLaunchKernel(fobj, 1, 1, 1, 32, 1, 1, 0, sobj, packed.address, 0)),
        *_other_launches(fint, s, packed.address),
        ("launch.launch_packed", lambda: launch.launch_packed((None, fobj), (1, 1, 1),
                                                               (32, 1, 1), 0, s, packed)),
        ("packed slot write", lambda: setattr(packed.slots[0], "value", buf.data.ptr)),
        ("cupy.empty((1, 4096), bf16)", lambda: cupy.empty((1, 4096), BF16)),
        ("cupy.ndarray((128, 128), bf16)", lambda: cupy.ndarray((128, 128), BF16)),
        ("cupy.cuda.memory.alloc(32 KB)", lambda: cupy.cuda.memory.alloc(32768)),
        ("cupy.empty in cupy.cuda.Device(d)", lambda: _empty_in(dev)),
        ("cupy.cuda.Device(d) enter+exit", lambda: _device_ctx(dev)),
        ("cupy.cuda.runtime.getDevice()", cupy.cuda.runtime.getDevice),
        ("cuCtxGetDevice (cuda-bindings: torch replays' device check)", drv.cuCtxGetDevice),
        ("cupy.cuda.get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr),
        ("arrays.current_stream_handle", lambda: arrays.current_stream_handle("cupy", None)),
        ("x.data.ptr", lambda: x.data.ptr),
        ("x.device.id", lambda: x.device.id),
        ("x.data.device_id", lambda: x.data.device_id),
        ("x.shape, x.strides, x.dtype", lambda: (x.shape, x.strides, x.dtype)),
        ("repeat.desc(x)", lambda: repeat.desc(x)),
        ("os.environ.get (unset)", lambda: os.environ.get("NBKERNELS_ROWS_LOOP")),
        ("repeat.EnvSwitches(2 names).values()", lambda: host._SWITCHES.values()),
        ("replay allocation (CuPy)", lambda: cupy_alloc(x, (1, 4096), BF16)),
        ("repeat.stream_handle (CuPy)", lambda: repeat.stream_handle(x)),
        ("rows key (x, w, out)", lambda: rows_key(rargs, (float, None))),
        ("hash(rows key)", lambda: hash(rkey)),
        ("rows key lookup (host._FAST.get)", lambda: host._FAST.get(rkey)),
        ("rows replay, launch included", lambda: rrep(rargs, rptrs, (1e-6,), None)),
        ("gemm key_of (a, b, out)", lambda: fast.key_of(a, b, None, c, 1, 0, None, None,
                                                          None)),
        ("gemm launcher, launch included", lambda: glz(gptrs, a, None, c, 1, 0, None)),
        ("rms_norm 1x4096 bf16, out=", lambda: nbkernels.rms_norm(x, w, out=out)),
        ("rms_norm 1x4096 bf16", lambda: nbkernels.rms_norm(x, w)),
        ("gemm 128^3 bf16, out=", lambda: nbkernels.gemm(a, b, out=c)),
        ("gemm 128^3 bf16", lambda: nbkernels.gemm(a, b)),
        ("cupy.matmul 128^3 bf16", lambda: cupy.matmul(a, b)),
    ]
    try:
        import torch

        tx = torch.randn(1, 4096, device="cuda").bfloat16()
        tw = torch.randn(4096, device="cuda").bfloat16()
        tout = torch.empty_like(tx)
        parts += [
            ("torch.empty((1, 4096), bf16)",
             lambda: torch.empty((1, 4096), dtype=torch.bfloat16, device=tx.device)),
            ("tx.new_empty((1, 4096))", lambda: tx.new_empty((1, 4096))),
            ("torch.empty_like(tx)", lambda: torch.empty_like(tx)),
            ("torch.cuda.current_stream().cuda_stream",
             lambda: torch.cuda.current_stream().cuda_stream),
            ("torch._C._cuda_getCurrentRawStream(0)",
             lambda: torch._C._cuda_getCurrentRawStream(0)),
            ("repeat.desc(tx)", lambda: repeat.desc(tx)),
            ("replay allocation (torch)",
             lambda: repeat.framework_ops(repeat.TORCH, dev)[0](tx, (1, 4096), BF16)),
            ("repeat.stream_handle (torch)", lambda: repeat.stream_handle(tx)),
            *([] if CALLS or repeat.desc(tx) is None else [
                ("torch replay's device check (framework_ops here())",
                 repeat.framework_ops(repeat.TORCH, dev)[2])]),
            ("rms_norm torch 1x4096 bf16, out=", lambda: nbkernels.rms_norm(tx, tw, out=tout)),
            ("rms_norm torch 1x4096 bf16", lambda: nbkernels.rms_norm(tx, tw)),
            ("torch rms_norm eager 1x4096 bf16",
             lambda: torch.nn.functional.rms_norm(tx, (4096,), tw, 1e-6)),
        ]
    except ImportError:
        pass
    if CALLS:
        parts = [p for p in parts if p[0].startswith(("empty", "rms_norm", "gemm 128",
                                                         "torch rms", "cupy.matmul"))]
    width = max(len(p[0]) for p in parts)
    for name, fn in parts:
        print(f"{name:<{width}}  {per_call(fn):7.2f} us", flush=True)
    if "torch" in sys.modules and not CALLS:  # where a torch call's time goes
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3000):
            nbkernels.rms_norm(tx, tw, out=tout)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return 0


def _other_launches(fint, stream, params):
    """The same empty launch through CuPy's Cython driver wrapper and through ctypes (libcuda's
    cuLaunchKernel, with and without releasing the GIL), where they exist (session 12)."""
    import ctypes

    out = []
    launch_kernel = getattr(getattr(cupy.cuda, "driver", None), "launchKernel", None)
    if launch_kernel is not None:
        out.append(("cupy.cuda.driver.launchKernel (Cython)",
                     lambda: launch_kernel(fint, 1, 1, 1, 32, 1, 1, 0, stream, params, 0)))
    for lib in (ctypes.CDLL, ctypes.PyDLL):
        try:
            fn = lib("libcuda.so.1").cuLaunchKernel
        except OSError:
            continue
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        out.append((f"ctypes {lib.__name__} cuLaunchKernel",
                    lambda fn=fn: fn(fint, 1, 1, 1, 32, 1, 1, 0, stream, params, None)))
    return out


def _empty_in(dev):
    with cupy.cuda.Device(dev):
        return cupy.empty((1, 4096), BF16)


def _device_ctx(dev):
    with cupy.cuda.Device(dev):
        pass


if __name__ == "__main__":
    sys.exit(main())
