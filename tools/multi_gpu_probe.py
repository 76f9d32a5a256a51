"""What a call on arrays of GPU 1 does while GPU 0 is current (device machine with two GPUs;
session 34). Runs on any tree (an A/B of the device handling): one scenario a process, since a
fault leaves the process's context unusable.

``python tools/multi_gpu_probe.py SCENARIO``; SCENARIO one of cupy_gemm, torch_gemm,
cupy_softmax, stream_of_gpu0. Prints one line: each call's relative error against float64,
or the exception the call raised.
"""
import sys

import cupy
import numpy as np

import nbkernels
from nbkernels.arrays import BF16


def relerr(got, want):
    return float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want))


def cupy_gemm(rng):
    a = rng.standard_normal((512, 256)).astype(np.float16)
    b = rng.standard_normal((256, 384)).astype(np.float16)
    with cupy.cuda.Device(1):
        da, db = cupy.asarray(a), cupy.asarray(b)
    res = nbkernels.gemm(da, db)
    with cupy.cuda.Device(1):
        got = cupy.asnumpy(res)
    return relerr(got, a.astype(np.float64) @ b.astype(np.float64))


def torch_gemm(rng):
    import torch

    a = rng.standard_normal((512, 256)).astype(BF16)
    b = rng.standard_normal((256, 384)).astype(BF16)
    dev = torch.device("cuda", 1)
    ta = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(dev)
    tb = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16).to(dev)
    got = nbkernels.gemm(ta, tb).float().cpu().numpy()
    return relerr(got, a.astype(np.float64) @ b.astype(np.float64))


def cupy_softmax(rng):
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    with cupy.cuda.Device(1):
        dx = cupy.asarray(x)
    res = nbkernels.softmax(dx)
    with cupy.cuda.Device(1):
        got = cupy.asnumpy(res)
    e = np.exp(x - x.max(-1, keepdims=True))
    return relerr(got, e / e.sum(-1, keepdims=True))


def stream_of_gpu0(rng):
    a = rng.standard_normal((128, 128)).astype(np.float16)
    with cupy.cuda.Device(1):
        da = cupy.asarray(a)
    s0 = cupy.cuda.Stream(non_blocking=True)  # device 0's
    res = nbkernels.gemm(da, da, stream=s0)
    s0.synchronize()
    with cupy.cuda.Device(1):
        got = cupy.asnumpy(res)
    return relerr(got, a.astype(np.float64) @ a.astype(np.float64))


def main():
    name = sys.argv[1]
    rng = np.random.default_rng()
    results = []
    for call in range(2):  # the full path, then a repeat
        try:
            results.append(f"relerr {globals()[name](rng):.2e}")
            cupy.cuda.Device(0).synchronize()
            cupy.cuda.Device(1).synchronize()
        except Exception as e:  # what the user would see
            results.append(f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
            break
    print(f"{name}: current device {cupy.cuda.runtime.getDevice()} after; "
          + " | ".join(f"call {i}: {r}" for i, r in enumerate(results)))


if __name__ == "__main__":
    main()
