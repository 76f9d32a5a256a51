"""The >48 KB shared-memory helper's checks that need no GPU."""
import pytest
from numba import types

import nbkernels

from .simrun import run_simulated


def test_negative_or_non_int_sizes_are_rejected():
    for bad in (-1, 1.5, "64k", True):
        with pytest.raises(nbkernels.NbkernelsError, match=r"nbytes must be a non-negative int"):
            nbkernels.enable_large_shared_memory(None, (types.float32[:],), bad)


def test_helper_works_in_the_simulator():
    script = r'''
import numpy as np
from numba import cuda, float32, types
import nbkernels

@cuda.jit
def k(x, out):
    buf = cuda.shared.array(0, float32)
    for i in range(cuda.threadIdx.x, x.size, cuda.blockDim.x):
        buf[i] = x[i] * 2
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        out[0] = buf[x.size - 1]

n = 80 * 1024 // 4
x = np.arange(n, dtype=np.float32)
out = np.zeros(1, np.float32)
kern = nbkernels.enable_large_shared_memory(k, (types.float32[:], types.float32[:]), n * 4)
kern[1, 64, 0, n * 4](x, out)
print("RESULT", out[0])
'''
    proc = run_simulated(["-c", script], timeout=300)
    assert f"RESULT {2.0 * (80 * 1024 // 4 - 1)}" in proc.stdout, proc.stderr[-2000:]
