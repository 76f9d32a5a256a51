"""On an sm_90 GPU: TMA into shared memory, wgmma from shared-memory descriptors, the device
descriptor helper. Kernels are compiled for sm_90a and launched through nbkernels.launch
(hopper_probes.HopperProbe.run); every Hopper probe also runs in tests/test_intrinsics_gpu.py.
"""
import numpy as np
import pytest
from numba import cuda

from nbkernels import tensormap
from nbkernels import intrinsics as I
from nbkernels.intrinsics import descriptors as D
from nbkernels.intrinsics import probes, wgmma_probes
from nbkernels.intrinsics.hopper_probes import HopperProbe
from nbkernels.intrinsics.probes import BF16

pytestmark = [pytest.mark.gpu, pytest.mark.min_cc(9, 0)]

X, Y = 24, 8  # the box's column and row in the source


def _tile_kernel(span):
    row = 64 * 2  # bytes of one box row (64 bf16)

    @cuda.jit
    def kernel(src, tile, tmaps):
        sh = cuda.shared.array(0, np.uint16)
        bar = cuda.shared.array(1, np.uint64)
        t = cuda.threadIdx.x
        pad = (1024 - I.smem_addr(sh, 0) % 1024) % 1024
        base = I.smem_addr(sh, 0) + pad
        b = I.smem_addr(bar, 0)
        if t == 0:
            I.fence_proxy_tensormap_acquire(tmaps, (0, 0))
            I.mbarrier_init(b, 1)
            I.fence_proxy_async()
        cuda.syncthreads()
        if t == 0:
            I.mbarrier_arrive_expect_tx(b, 64 * row)
            I.tma_load_2d(base, tmaps, (0, 0), X, Y, b)
        while not I.mbarrier_try_wait_parity(b, 0):
            pass
        for e in range(t, 64 * 64, 128):  # undo the swizzle by its definition (descriptors.py)
            r, c = e // 64, e % 64
            off = r * row + c * 2
            if span == 128:
                off ^= ((off >> 7) & 7) << 4
            tile[r, c] = sh[(pad + off) // 2]

    return kernel


@pytest.mark.parametrize("span", [128, 0])
def test_tma_2d_load_lands_the_tile_in_shared_memory(span):
    rng = np.random.default_rng()
    probe = HopperProbe(
        f"tma_tile_{span}", (), _tile_kernel(span),
        lambda r, e: {"src": rng.integers(0, 2**16, (96, 112)).astype(np.uint16)},
        lambda inp: {"tile": np.empty((64, 64), np.uint16)},
        lambda inp: {"tile": inp["src"][Y:Y + 64, X:X + 64]},
        threads=128, shared_bytes=1024 + 8192,
        make_maps=lambda d: [tensormap.tensor_map(d["src"], (64, 64), dtype=BF16, swizzle=span)])
    inp = probe.make_inputs(rng, True)
    msg = probes.mismatch(probe, probe.run(inp), probe.reference(inp), exact=True)
    assert msg is None, msg


@pytest.mark.parametrize("n", [64, 256])
@pytest.mark.parametrize("mode", ["exact", "random"])
def test_wgmma_bf16_from_shared_memory_descriptors(n, mode):
    """One m64nNk16 bf16 wgmma, A and B K-major with the 128-byte swizzle (the TMA layout),
    against NumPy; the descriptors are built on the device by smem_desc."""
    w = wgmma_probes._w("bf16", "bf16", "f32", "ss")
    probe = wgmma_probes.make_wgmma_probe(
        f"wgmma_bf16_m64n{n}k16", [wgmma_probes.Case(w, n, (False, 128, 0), (False, 128, 0))],
        1e-5)
    inp = probe.make_inputs(np.random.default_rng(), mode == "exact")
    msg = probes.mismatch(probe, probe.run(inp), probe.reference(inp), exact=mode == "exact")
    assert msg is None, msg


@cuda.jit
def _descriptors(fields, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = I.smem_desc(np.uint32(fields[i, 0]), fields[i, 1], fields[i, 2], fields[i, 3],
                             fields[i, 4])


def test_device_descriptor_helper_matches_the_host_twin():
    rng = np.random.default_rng()
    fields = np.stack([rng.integers(0, 2**14, 256) * 16, rng.integers(0, 2**14, 256) * 16,
                       rng.integers(0, 2**14, 256) * 16, rng.integers(0, 4, 256),
                       rng.integers(0, 8, 256)], axis=1).astype(np.int64)
    out = np.zeros(256, np.uint64)
    _descriptors[2, 128](fields, out)
    want = [D.encode_desc(int(a), int(lb), int(sb), int(sw), int(bo)) for a, lb, sb, sw, bo in fields]
    np.testing.assert_array_equal(out, np.array(want, np.uint64))


def test_tensor_map_is_encoded_by_the_driver():
    x = cuda.to_device(np.zeros((100, 96), np.float32))
    tm = tensormap.tensor_map(x, (32, 32), swizzle=128)
    assert tm.bytes.shape == (128,) and tm.bytes.any()
    assert tm.box_bytes == 32 * 32 * 4
    # only the simulator registers maps (on a GPU the registry grew by one per address)
    assert tensormap.lookup(tm.bytes.tobytes()) is None
    # the bytes are the driver's own map, read word by word (cuda-bindings' ``opaque``)
    from cuda.bindings import driver as drv

    ptr = x.device_ctypes_pointer.value
    err, raw = drv.cuTensorMapEncodeTiled(*tensormap.driver_args(
        np.dtype(np.float32), (100, 96), (96 * 4, 4), (32, 32), 128, (1, 1), 256, False, ptr))
    assert err == drv.CUresult.CUDA_SUCCESS
    want = np.array([int(w) for w in raw.opaque], np.uint64).view(np.uint8)
    np.testing.assert_array_equal(tm.bytes, want)
    # and the GEMM map cache's per-geometry encoder gives them at any address
    enc = tensormap.encoder(np.float32, (100, 96), (96 * 4, 4), (32, 32), swizzle=128)
    np.testing.assert_array_equal(enc(ptr), want)


def test_a_gemm_on_new_operands_does_not_wait_for_work_queued_on_the_default_stream():
    """The sm90a GEMM passes its operands' tensor maps in the launch's parameters (session 33;
    before, a device map store copied each new map, and a synchronous copy waited for queued
    work): with ~0.5 s of work queued on the legacy default stream, a call on operands it has
    never seen returns while that work still runs, and its result is right once it has run."""
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    import nbkernels

    rng = np.random.default_rng()

    def operands():
        return [cupy.asarray(rng.standard_normal((1024, 1024)).astype(np.float16))
                for _ in range(2)]

    warm = operands()
    assert "sm90a" in nbkernels.explain(*warm), nbkernels.explain(*warm)
    nbkernels.gemm(*warm)  # compiled and loaded: the timed call below pays none of it
    a, b = operands()  # new pointers: new tensor maps
    out = cupy.full((1024, 1024), np.nan, np.float16)  # poisoned
    cupy.cuda.Device().synchronize()
    torch.cuda._sleep(int(1e9))  # ~0.5 s of spinning (at ~2 GHz) on the legacy stream
    nbkernels.gemm(a, b, out=out)
    busy = not cupy.cuda.Stream.null.done
    cupy.cuda.Device().synchronize()
    assert busy, "the queued work had finished by the time the call returned"
    ref = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)
    np.testing.assert_allclose(cupy.asnumpy(out).astype(np.float64), ref, rtol=2e-3,
                               atol=2e-3 * np.sqrt(1024))


def _dsmem_kernel(cluster):
    @cuda.jit
    def kernel(vals, out):
        """Thread t of CTA r stores vals[block, t] into slot r of every CTA's row t (its own
        included) through distributed shared memory; after one cluster barrier each CTA reads
        its slots back. A CTA's peers are the other ranks of its cluster."""
        slots = cuda.shared.array((128, 4), np.float32)
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        me = I.cluster_ctarank()
        for i in range(4):
            slots[t, i] = np.float32(-1)
        I.barrier_cluster_arrive()  # every CTA's slots are poisoned before any peer stores
        I.barrier_cluster_wait()
        for r in range(cluster):
            I.st_shared_cluster_f32(I.mapa_shared_cluster(I.smem_addr(slots, (t, me)), r),
                                    vals[b, t])
        I.barrier_cluster_arrive()
        I.barrier_cluster_wait()
        for i in range(4):
            out[b, t, i] = slots[t, i]
        out[b, t, 4] = np.float32(me)

    kernel.nbk_cluster = (cluster, 1, 1)
    return kernel


@pytest.mark.parametrize("cluster", [2, 4])
def test_distributed_shared_memory_store_reaches_every_cta_of_the_cluster(cluster):
    import cupy
    from numba import types

    from nbkernels import arrays, runner
    from nbkernels.arch import Arch

    rng = np.random.default_rng()
    blocks = 4 * cluster
    vals = rng.standard_normal((blocks, 128)).astype(np.float32)
    d_vals = cupy.asarray(vals)
    d_out = cupy.full((blocks, 128, 5), np.nan, np.float32)  # poisoned
    sig = (types.float32[:, ::1], types.float32[:, :, ::1])
    runner.launch_jit(_dsmem_kernel(cluster), sig, (blocks, 1, 1), (128, 1, 1), 0, 0,
                      (arrays.as_view(d_vals, "vals"), arrays.as_view(d_out, "out")),
                      ("test_dsmem", cluster), Arch.parse("sm_90"))
    out = cupy.asnumpy(d_out)
    expect = np.full((blocks, 128, 5), -1, np.float32)
    for b in range(blocks):
        first = b - b % cluster  # the cluster's rank 0 (clusters are consecutive blocks in x)
        for r in range(cluster):
            expect[b, :, r] = vals[first + r]
        expect[b, :, 4] = b % cluster
    np.testing.assert_array_equal(out, expect)
