"""Every shipped intrinsic, run by its probe kernel in numba's simulator, against NumPy.

The simulator needs NUMBA_ENABLE_CUDASIM=1 before numba.cuda is imported, so the probes
run once in a child interpreter; each test checks one probe's outputs. Inputs are fresh
random draws every run (no fixed seed); both exactly-representable and general inputs.
"""
import numpy as np
import pytest

from nbkernels.intrinsics import SHIPPED, probes, selfcheck

from .simrun import run_simulated


@pytest.fixture(scope="module")
def sim_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim") / "result.npz"
    proc = run_simulated(["-m", "nbkernels.intrinsics.selfcheck", "--out", str(out)])
    if not out.exists():
        pytest.fail(f"simulated probes crashed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return dict(np.load(out))


@pytest.mark.parametrize("mode", selfcheck.MODES)
@pytest.mark.parametrize("name", list(probes.PROBES))
def test_probe_matches_numpy(sim_result, name, mode):
    probe = probes.PROBES[name]
    ins = {k.split("|")[3]: v for k, v in sim_result.items() if k.startswith(f"{name}|{mode}|in|")}
    outs = {k.split("|")[3]: v for k, v in sim_result.items() if k.startswith(f"{name}|{mode}|out|")}
    assert ins and outs, f"{name} did not run"
    msg = probes.mismatch(probe, outs, probe.reference(ins), exact=(mode == "exact"))
    assert msg is None, msg


def test_every_shipped_intrinsic_has_a_probe():
    covered = {c for p in probes.PROBES.values() for c in p.covers}
    assert set(SHIPPED) - covered == set()


def test_reference_catches_a_wrong_result():
    """The comparison must fail when one element is off (guards against a vacuous check)."""
    rng = np.random.default_rng()
    probe = probes.PROBES["mma_m16n8k16_bf16_f32"]
    inp = probe.make_inputs(rng, True)
    want = probe.reference(inp)
    got = {"D": want["D"].copy()}
    got["D"][3, 5] += 1
    msg = probes.mismatch(probe, got, want, exact=True)
    assert msg is not None and "(3, 5)" in msg


SIM_ERRORS = r'''
import numpy as np
from numba import cuda
import nbkernels.intrinsics as I

@cuda.jit
def diverged(out):
    lane = cuda.threadIdx.x
    if lane < 16:
        out[lane] = I.ldmatrix_x1(np.uint32(0))

@cuda.jit
def bad_addr(out):
    out[0] = I.ld_global_v4(np.uint64(12345))[0]

import nbkernels.intrinsics.sim as sim
sim.WARP_TIMEOUT_S = 2.0
for kern, threads in ((diverged, 32), (bad_addr, 1)):
    try:
        kern[1, threads](np.zeros(32, np.uint32))
        print("NO ERROR", kern)
    except Exception as e:
        print(type(e).__name__, "|", str(e).splitlines()[0][:300])
'''


def test_simulator_reports_divergence_and_bad_addresses():
    proc = run_simulated(["-c", SIM_ERRORS], timeout=300)
    out = proc.stdout
    assert "NO ERROR" not in out, out + proc.stderr
    assert "did not reach this warp-collective instruction" in out, out + proc.stderr
    assert "is not inside any global array" in out or "not 16-byte aligned" in out, out


TWO_SHARED = r'''
import numpy as np
from numba import cuda, float32

@cuda.jit
def k(out):
    a = cuda.shared.array(32, float32, alignment=16)
    b = cuda.shared.array(32, float32)
    i = cuda.threadIdx.x
    a[i] = i
    b[i] = -i
    cuda.syncthreads()
    out[i] = a[i] - b[31 - i]

import nbkernels  # installs the simulator shims
out = np.zeros(32, np.float32)
k[1, 32](out)
print("OUT", out.astype(int).tolist())
'''


def test_shim_keeps_shared_arrays_apart():
    """Two static shared arrays must stay distinct under nbkernels' simulator shim (they once
    aliased because numba keys them by the declaring line and the shim hid that line)."""
    proc = run_simulated(["-c", TWO_SHARED], timeout=300)
    want = [i + (31 - i) for i in range(32)]
    assert f"OUT {want}" in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_sm90_f64_fragment_layouts_are_the_ptx_isa_ones():
    """The layouts the m16n8k4/k8/k16 f64 specs (and their probes and simulator) use, against
    the PTX ISA's formulas (9.7.14.5, "Matrix Fragments for mma.m16n8k4 / m16n8k8 / m16n8k16", .f64),
    written out here; the GEMM relies on m16n8k8's A being two m8n8k4 A fragments (rows g and
    g + 8) for k-quarters 0 and 1, and its B two m8n8k4 B fragments."""
    from nbkernels.intrinsics import REGISTRY

    k4, k8, k16 = (REGISTRY[n].spec.extra
                   for n in ("mma_m16n8k4_f64", "mma_m16n8k8_f64", "mma_m16n8k16_f64"))
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        acc = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
        assert [k4["a_layout"](lane, i) for i in range(2)] == [(g, t), (g + 8, t)]
        assert k4["b_layout"](lane, 0) == (t, g)
        assert [k8["a_layout"](lane, i) for i in range(4)] == [(g, t), (g + 8, t), (g, t + 4),
                                                               (g + 8, t + 4)]
        assert [k8["b_layout"](lane, i) for i in range(2)] == [(t, g), (t + 4, g)]
        assert [k16["a_layout"](lane, i) for i in range(8)] == [
            (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4), (g, t + 8), (g + 8, t + 8),
            (g, t + 12), (g + 8, t + 12)]
        assert [k16["b_layout"](lane, i) for i in range(4)] == [(t, g), (t + 4, g), (t + 8, g),
                                                                (t + 12, g)]
        for ex in (k4, k8, k16):
            assert [ex["acc_layout"](lane, i) for i in range(4)] == acc
    assert k4["shape"] == (16, 8, 4) and k8["shape"] == (16, 8, 8) and k16["shape"] == (16, 8, 16)


def test_address_space_registers_arrays_from_many_threads(monkeypatch):
    """A block's simulated threads register global arrays concurrently (CI, session 11: a
    probe's store landed outside every array). A lookup that yields the thread mid-registration
    (a slow bisect) must still give each array its own region, found again by address."""
    import bisect
    import threading
    import time

    from nbkernels.intrinsics import sim

    real = bisect.bisect

    def slow_bisect(*args):
        pos = real(*args)
        time.sleep(0.002)  # let the other threads run between the lookup and the insert
        return pos

    space = sim.AddressSpace("global", sim._GLOBAL_BASE, 0x7FFF_FFFF_FFFF)
    arrays = [np.zeros(64, np.float64) for _ in range(8)]
    addrs = {}
    monkeypatch.setattr(bisect, "bisect", slow_bisect)
    ts = [threading.Thread(target=lambda i=i: addrs.update({i: space.address_of(arrays[i], 3)}))
          for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    monkeypatch.setattr(bisect, "bisect", real)
    assert len(set(addrs.values())) == 8
    for i, a in enumerate(arrays):
        a[3] = i + 1.5
        assert space.bytes_at(addrs[i], 8, "load").view(np.float64)[0] == i + 1.5


def test_warp_rendezvous_runs_its_action_once_a_round_and_breaks_on_a_timeout():
    """The warp collectives' barrier: in every round each thread sees that round's result (the
    last to arrive computes it); a thread that waits for a lane which never comes breaks the
    barrier for every thread, as threading.Barrier does."""
    import threading

    from nbkernels.intrinsics import sim

    n, rounds = 8, 50
    inputs, results = [None] * n, []
    seen = [[] for _ in range(n)]
    bar = sim._Rendezvous(n, lambda: results.append(sum(inputs)))

    def lane(i):
        for r in range(rounds):
            inputs[i] = r * 100 + i
            bar.wait(10)
            seen[i].append(results[r])

    ts = [threading.Thread(target=lane, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    want = [r * 100 * n + n * (n - 1) // 2 for r in range(rounds)]
    assert results == want and all(s == want for s in seen)

    bar, errors = sim._Rendezvous(3, lambda: None), []

    def short(timeout):
        try:
            bar.wait(timeout)
        except threading.BrokenBarrierError:
            errors.append(timeout)

    ts = [threading.Thread(target=short, args=(t,)) for t in (0.05, 30)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert sorted(errors) == [0.05, 30] and bar.broken
    with pytest.raises(threading.BrokenBarrierError):
        bar.wait(1)
