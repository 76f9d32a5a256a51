"""The simulator's Hopper runtime reports misuse instead of computing a wrong answer.

(The probes, run by tests/test_intrinsics_sim.py, check the right answers.) One child
interpreter runs every scenario, since the simulator needs NUMBA_ENABLE_CUDASIM=1 set first.
"""
import pytest

from .simrun import run_simulated

SCENARIOS = r'''
import numpy as np
from numba import cuda
import nbkernels.intrinsics as I
from nbkernels import tensormap
from nbkernels.intrinsics import sim, wgmma as W

sim.WARP_TIMEOUT_S = 1.0
Z = W.zero_accumulator(4)


@cuda.jit
def never_arrives(out):
    bar = cuda.shared.array(1, np.uint64)
    b = I.smem_addr(bar, 0)
    if cuda.threadIdx.x == 0:
        I.mbarrier_init(b, 2)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        I.mbarrier_arrive(b)  # one arrival of the two expected
    while not I.mbarrier_try_wait_parity(b, 0):
        pass


@cuda.jit
def uninitialised(out):
    bar = cuda.shared.array(1, np.uint64)
    out[0] = I.mbarrier_try_wait_parity(I.smem_addr(bar, 0), 0)


@cuda.jit
def half_warpgroup(out):
    sh = cuda.shared.array(0, np.uint8)
    d = I.smem_desc(I.smem_addr(sh, 0), 16, 1024, 1, 0)
    acc = I.wgmma_bf16_f32_ss(Z(), d, d, 0, 0, 0)
    out[0] = acc[0]


@cuda.jit
def per_thread_descriptor(out):
    sh = cuda.shared.array(0, np.uint8)
    d = I.smem_desc(I.smem_addr(sh, 0) + 16 * (cuda.threadIdx.x % 2), 16, 1024, 0, 0)
    acc = I.wgmma_bf16_f32_ss(Z(), d, d, 0, 0, 0)
    out[0] = acc[0]


@cuda.jit
def off_atom(out):
    sh = cuda.shared.array(0, np.uint8)
    d = I.smem_desc(I.smem_addr(sh, 0) + 128, 16, 1024, 1, 0)  # row 1 of a 128-byte atom
    acc = I.wgmma_bf16_f32_ss(Z(), d, d, 0, 0, 0)
    out[0] = acc[0]


@cuda.jit
def elect_outside_mask(out):
    out[cuda.threadIdx.x] = I.elect_sync(0xFFFF)  # lanes 16-31 execute it but are not in it


@cuda.jit
def not_a_map(out, tmaps):
    sh = cuda.shared.array(0, np.uint8)
    bar = cuda.shared.array(1, np.uint64)
    b = I.smem_addr(bar, 0)
    I.mbarrier_init(b, 1)
    I.tma_load_2d(I.smem_addr(sh, 0), tmaps, (0, 0), 0, 0, b)


@cuda.jit
def bulk_odd_size(out):
    sh = cuda.shared.array(0, np.uint8)
    bar = cuda.shared.array(1, np.uint64)
    b = I.smem_addr(bar, 0)
    I.mbarrier_init(b, 1)
    I.mbarrier_arrive_expect_tx(b, 20)
    I.bulk_load(I.smem_addr(sh, 0), I.gmem_addr(out, 0), 20, b)


@cuda.jit
def elect_halves(out):
    lane = cuda.threadIdx.x
    e = np.uint32(9)
    if lane >= 16:
        e = I.elect_sync(0xFFFF0000)
    out[lane] = e


def report(name, kern, launch, *args):
    try:
        kern[launch](*args)
        print(name, "| NO ERROR")
    except Exception as e:
        print(name, "|", type(e).__name__, "|", " ".join(str(e).split())[:400])


out = np.zeros(128, np.float32)
report("never_arrives", never_arrives, (1, 32), out)
report("uninitialised", uninitialised, (1, 1), np.zeros(1, np.uint32))
report("half_warpgroup", half_warpgroup, (1, 64, 0, 2048), out)
report("per_thread_descriptor", per_thread_descriptor, (1, 128, 0, 2048), out)
report("off_atom", off_atom, (1, 128, 0, 4096), out)
report("elect_outside_mask", elect_outside_mask, (1, 32), np.zeros(32, np.uint32))
report("bulk_odd_size", bulk_odd_size, (1, 1, 0, 1024), out)
report("not_a_map", not_a_map, (1, 1, 0, 1024), out, cuda.to_device(np.zeros((1, 128), np.uint8)))
halves = np.zeros(32, np.uint32)
elect_halves[1, 32](halves)
print("elect_halves |", halves.tolist())
try:
    tensormap.tensor_map(np.zeros((64, 64), np.float32), (8, 8))
except Exception as e:
    print("host_array_map |", type(e).__name__, "|", e)
'''


@pytest.fixture(scope="module")
def report():
    proc = run_simulated(["-c", SCENARIOS], timeout=600)
    lines = dict(line.split(" | ", 1) for line in proc.stdout.splitlines() if " | " in line)
    if len(lines) < 10:
        pytest.fail(f"simulated scenarios did not all run:\n{proc.stdout}\n{proc.stderr[-4000:]}")
    return lines


@pytest.mark.parametrize("name,expected", [
    ("never_arrives", r"phase of parity 0 at shared address .* did not complete within 1 s "
                      r"\(phase parity 0, 1 of 2 arrivals pending, tx-count 0\)"),
    ("uninitialised", r"no mbarrier was initialised at shared address"),
    ("half_warpgroup", r"warpgroup 0 of block \(0, 0, 0\) has 64 threads, but this instruction "
                       r"needs all 128"),
    ("per_thread_descriptor", r"thread 1 of the warpgroup passed other descriptors"),
    ("off_atom", r"swizzled operand start 0x[0-9a-f]+ is not on a 1024-byte swizzle atom"),
    ("elect_outside_mask", r"lane \d+ executes it but is not in its member mask 0x0000ffff"),
    ("not_a_map", r"the 128 bytes at tmap\[\(0, 0\)\] are not a tensor map encoded by "
                  r"nbkernels.tensormap"),
    ("host_array_map", r"in the simulator pass a device array"),
    ("bulk_odd_size", r"bulk_load: size must be a positive multiple of 16 bytes, got 20"),
])
def test_misuse_is_reported(report, name, expected):
    import re

    assert name in report, report
    assert report[name].startswith(("SimulatorError", "NbkernelsError")), report[name]
    assert re.search(expected, report[name]), report[name]


def test_elect_picks_the_lowest_lane_of_its_mask(report):
    assert report["elect_halves"] == str([9] * 16 + [1] + [0] * 15)
