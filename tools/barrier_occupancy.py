"""How many blocks an SM holds by the named barriers a kernel uses (device machine).

The occupancy query (``cuOccupancyMaxActiveBlocksPerMultiprocessor``) for tiny kernels
that use barrier ids 0 .. k-1 (ptxas records k in the cubin's EIATTR_NUM_BARRIERS) and one
whose id is computed at run time (ptxas reserves all 16), at 32, 64 and 128 threads and no
shared memory: registers and shared memory do not limit them, so what is left is the SMs'
block limit and the barriers. ``python tools/barrier_occupancy.py``"""
import cupy
from cuda.bindings import driver as drv


def kernel(body, name):
    k = cupy.RawKernel('extern "C" __global__ void %s(int* p) { %s }' % (name, body), name)
    k.compile()
    return drv.CUfunction(k.kernel.ptr)


def main():
    rows = []
    for k in (1, 2, 3, 4, 5, 6, 8, 12, 16):
        body = "".join('asm volatile("bar.sync %d, 32;");' % i for i in range(k))
        rows.append((f"ids 0..{k - 1}", kernel(body, f"nbk_bar{k}")))
    rows.append(("id at run time", kernel(
        'asm volatile("bar.sync %0, 32;" :: "r"(p[threadIdx.x] & 15));', "nbk_bardyn")))
    print("| barriers | 32 threads | 64 threads | 128 threads |")
    print("| --- | --- | --- | --- |")
    for label, f in rows:
        got = [drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, t, 0)[1] for t in (32, 64, 128)]
        print(f"| {label} | " + " | ".join(str(g) for g in got) + " |")


if __name__ == "__main__":
    main()
