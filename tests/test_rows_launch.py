"""Row-kernel launches against a GPU's launch limits, on the CPU: every planned launch fits
(threads, static + dynamic shared memory, grid), the launcher opts a kernel in to more than
48 KB of shared memory counting its static part, and a launch past a limit fails naming it.

The H200 run of c1ca333 failed with a bare CUDA_ERROR_INVALID_VALUE for rms_norm float32 rows
of 122 and 3000 elements: 128 threads x (2 x 128 + 128) B = exactly 48 KB of dynamic shared
memory, plus the kernel's 128 B of static reduction scratch, with the function never opted in
(launch.function compared only the dynamic size with 48 KB)."""
import itertools
import types as pytypes

import pytest

from nbkernels import launch, runner
from nbkernels.errors import NbkernelsError
from nbkernels.rows import config as cfgmod
from nbkernels.rows import host
from nbkernels.rows import layer_norm_kernel, rms_norm_kernel, softmax_kernel, swiglu_kernel

H200 = (132, 232448)  # SMs, opt-in shared memory per block (227 KB)
H200_SM = cfgmod.SmLimits()  # sm_90's per-SM limits
OPTINS = {"H200": 232448, "A100": 166912, "sm_86": 101376, "T4": 65536}


def kernels():
    """Every row kernel build the host can pick on sm_80+ (Turing differs only in code)."""
    out = []
    for k in ("f16", "bf16", "f32"):
        for wk in (k, "f32"):
            for r in (False, True):
                out.append((f"rms_norm {k} w{wk} resid={r}", rms_norm_kernel.build(k, wk, True, r)))
            for hw, hb in itertools.product((False, True), repeat=2):
                out.append((f"layer_norm {k} w{wk} {hw} {hb}",
                            layer_norm_kernel.build(k, wk, wk, True, hw, hb)))
        out.append((f"softmax {k}", softmax_kernel.build(k, True)))
        out.append((f"swiglu {k}", swiglu_kernel.build(k, True)))
    return out


SHAPES = [(5, 122), (37, 3000), (37, 2000), (1000, 1024), (130, 4096), (7, 12290), (3, 65536),
          (2, 1 << 20), (5000, 1024), (4000, 512), (8192, 8192), (32768, 4096), (1, 4096),
          (64, 4096), (1, 1), (200, 16384), (1, 16384)]
FORCED = [None, cfgmod.RowConfig("block", 512), cfgmod.RowConfig("split", 256),
          cfgmod.RowConfig("block", 64, blocks=3, buffers=2),
          cfgmod.RowConfig("warp", 32, 4, buffers=2)]


def _launches(kernel, rows, n, forced, optin, sms, regs, static, mode):
    """(grid, block, dynamic smem) of each launch the host plans for ``rows`` x ``n``."""
    call = host.Call("test")
    try:
        cfg = call.config(pytypes.SimpleNamespace(n=n, rows=rows), forced, kernel)
    except NbkernelsError:
        return []  # a forced layout that does not hold these rows: refused before launching
    block = cfg.threads * cfg.rows_per_block
    if cfg.variant == "split":
        return [(cfg.grid(rows), block, block * kernel.nbk_row_bytes)] * 2
    grid, _, smem = host.plan(kernel, cfg, cfg.grid(rows), regs, static, mode)
    return [(grid, block, smem)]


@pytest.mark.parametrize("gpu", sorted(OPTINS))
def test_planned_launches_respect_every_launch_limit(monkeypatch, gpu):
    optin = OPTINS[gpu]
    monkeypatch.setattr(host, "device_limits", lambda: (H200[0], optin))
    monkeypatch.setattr(host, "sm_limits", lambda: H200_SM)
    monkeypatch.delenv("NBKERNELS_ROW_VARIANT", raising=False)
    checked = 0
    for name, kern in kernels():
        bound = kern.nbk_launch_bounds[0]
        for (rows, n), forced, mode in itertools.product(SHAPES, FORCED,
                                                       (None, "0", "1", "2", "4")):
            # the first launch plans with the guessed static size, later ones with the real
            # one (at most cfgmod.STATIC_SMEM; swiglu has none): registers 64 (the guess),
            # 32 and 128
            for regs, static in ((64, cfgmod.STATIC_SMEM), (32, 128), (128, 256), (40, 0)):
                for grid, block, smem in _launches(kern, rows, n, forced, optin, H200[0], regs,
                                                   static, mode):
                    cfgmod.check_launch(name, grid, block, smem, static, bound, optin)
                    assert 1 <= block <= min(bound, 1024), (name, rows, n, forced, mode)
                    assert smem + static <= optin, (name, rows, n, forced, mode)
                    assert grid >= 1
                    checked += 1
    assert checked > 1000


def test_h200_float32_rms_norm_plans_of_the_failing_cases(monkeypatch):
    """The plans the H200 refused: 48 KB of dynamic shared memory, which only launches once
    the function is opted in past 48 KB less its static size (test below)."""
    monkeypatch.setattr(host, "device_limits", lambda: H200)
    monkeypatch.setattr(host, "sm_limits", lambda: H200_SM)
    monkeypatch.delenv("NBKERNELS_ROW_VARIANT", raising=False)
    kern = rms_norm_kernel.build("f32", "f32", True, False)
    for rows, n in ((5, 122), (37, 4096)):  # rows of 3000 now take 96 threads (r47)
        for regs, static in ((64, cfgmod.STATIC_SMEM), (40, 128)):
            (grid, block, smem), = _launches(kern, rows, n, None, H200[1], H200[0], regs,
                                             static, None)
            assert (block, smem) == (128, 49152)
            assert smem + static > 48 * 1024  # needs the opt-in attribute


class FakeDriver:
    """The driver's shared-memory rules for one function: MAX_DYNAMIC_SHARED_SIZE_BYTES starts
    at 48 KB less the static size and may be raised to the opt-in limit less the static size;
    a launch with more dynamic shared memory than the attribute fails."""

    def __init__(self, drv, static, optin=232448):
        self.drv, self.static, self.optin = drv, static, optin
        self.max_dynamic = 48 * 1024 - static
        self.ok = drv.CUresult.CUDA_SUCCESS
        self.bad = drv.CUresult.CUDA_ERROR_INVALID_VALUE

    def cuModuleGetFunction(self, module, entry):
        return self.ok, "fn"

    def cuFuncGetAttribute(self, attr, f):
        A = self.drv.CUfunction_attribute
        if attr == A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
            return self.ok, self.static
        if attr == A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            return self.ok, self.max_dynamic
        raise AssertionError(attr)

    def cuFuncSetAttribute(self, f, attr, value):
        assert attr == self.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        if value + self.static > self.optin:
            return (self.bad,)
        self.max_dynamic = value
        return (self.ok,)

    def launchable(self, smem):
        return smem <= self.max_dynamic


@pytest.fixture
def fake_driver(monkeypatch):
    drv = pytest.importorskip("cuda.bindings.driver")
    from numba import cuda

    from nbkernels import compat

    def make(static):
        fake = FakeDriver(drv, static)
        for name in ("cuModuleGetFunction", "cuFuncGetAttribute", "cuFuncSetAttribute"):
            monkeypatch.setattr(drv, name, getattr(fake, name))
        monkeypatch.setattr(cuda, "get_current_device", lambda: pytypes.SimpleNamespace(id=0))
        monkeypatch.setattr(cuda, "current_context", lambda: None)
        monkeypatch.setattr(compat, "load_module", lambda cubin, key: "module")
        monkeypatch.setattr(launch, "_loaded", {})
        monkeypatch.setattr(launch, "_smem_set", {})
        return fake
    return make


@pytest.mark.parametrize("static", [0, 128, 256])
@pytest.mark.parametrize("sizes", [(49152,), (1024, 49152), (0, 48 * 1024 - 128, 49152, 65536),
                                   (196608, 1024, 49152)])
def test_function_opts_in_counting_static_shared_memory(fake_driver, static, sizes):
    fake = fake_driver(static)
    for smem in sizes:
        launch.function("k", b"", "entry", smem)
        assert fake.launchable(smem), (static, smem, fake.max_dynamic)


def test_check_launch_names_the_launch():
    cfgmod.check_launch("k", 264, 128, 49152, 128, 512, 232448)  # fits
    for args, what in (((264, 1024, 0, 0, 512, 232448), "1024 threads"),
                       ((264, 128, 232448, 128, 512, 232448), "232576 B per block"),
                       ((0, 128, 0, 0, 512, 232448), "grid of 0")):
        with pytest.raises(NbkernelsError, match=what) as e:
            cfgmod.check_launch("rms_norm_kernel", *args)
        msg = str(e.value)
        assert "rms_norm_kernel" in msg and f"grid {args[0]} x block {args[1]}" in msg
        assert f"{args[2]} B dynamic" in msg


def test_launch_error_names_kernel_grid_block_and_smem(monkeypatch):
    """A refusal the checks did not foresee still names the launch."""
    monkeypatch.setattr(host, "device_limits", lambda: H200)

    def refuse(*a, **k):
        raise NbkernelsError("cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE: invalid argument")
    monkeypatch.setattr(host.runner, "launch_jit", refuse)
    call = host.Call("rms_norm")
    call.first = pytypes.SimpleNamespace(device=0)
    monkeypatch.setattr(call, "handle", lambda: 0)
    monkeypatch.setattr(call, "arch", lambda: "sm_90")
    kern = rms_norm_kernel.build("f32", "f32", True, False)
    with pytest.raises(NbkernelsError, match=r"rms_norm_kernel: cuLaunchKernel failed.*grid 2 x "
                                             r"block 128, 49152 B dynamic"):
        call.launch(kern, (), 2, 128, [], (), ("k",), 49152)
    with pytest.raises(NbkernelsError, match=r"rms_norm_kernel: launch of grid 2 x block 128 "
                                             r"with 232448 B dynamic"):
        call.launch(kern, (), 2, 128, [], (), ("k",), 232448)


def test_row_launches_are_cached_on_disk(monkeypatch):
    """Every row launch hands the launcher key parts it persists (runner.persisted): before,
    none of them did, and every process compiled its row kernels again (perf-notes r17)."""
    seen = []
    monkeypatch.setattr(host, "device_limits", lambda: H200)
    monkeypatch.setattr(host.runner, "launch_jit", lambda *a: seen.append(a[7]))
    call = host.Call("rms_norm")
    call.first = pytypes.SimpleNamespace(device=0)
    monkeypatch.setattr(call, "handle", lambda: 0)
    monkeypatch.setattr(call, "arch", lambda: "sm_90")
    kern = rms_norm_kernel.build("f32", "f32", True, False)
    parts = ("rms_norm", "f32", "f32", True, False)
    call.launch(kern, (), 2, 128, [], (), parts, 0)
    assert seen == [parts + (None,)] and runner.persisted(seen[0])
    assert not runner.persisted(("gemm", "f16", "an epilogue's key"))


H100_BW, H200_BW = 25.4, 37.2  # peak DRAM GB/s an SM (host.dram_gbps_per_sm)


def _planned(monkeypatch, kernel, cfg, forced):
    """(mode, fallback, groups) a launch of ``kernel`` at ``cfg`` plans with on GPUs of unknown,
    the H100's and the H200's DRAM bandwidth per SM, then with NBKERNELS_ROWS_LOOP=forced."""
    seen = []

    def plan(kernel, cfg, items, regs, static, mode, fallback, groups=1):
        seen.append((mode, fallback, groups))
        return 1, 1, 0

    monkeypatch.setattr(host, "plan", plan)
    monkeypatch.setattr(host.Call, "launch", lambda self, *a, **k: None)
    monkeypatch.delenv("NBKERNELS_ROWS_LOOP", raising=False)
    call = host.Call("test")
    call.sim, call.first = False, pytypes.SimpleNamespace(device=0)
    monkeypatch.setattr(call, "arch", lambda: "sm_90")
    for bw in (0.0, H100_BW, H200_BW):
        monkeypatch.setattr(host, "sm_limits", lambda bw=bw: cfgmod.SmLimits(dram_gbps_per_sm=bw))
        call.loop_launch(kernel, (), cfg, 100, lambda nbuf: [], (), ())
    monkeypatch.setenv("NBKERNELS_ROWS_LOOP", forced)
    call.loop_launch(kernel, (), cfg, 100, lambda nbuf: [], (), ())
    return seen


@pytest.mark.parametrize("kernel, cfg, want, h100, h200", [
    (softmax_kernel.build("f32", True), cfgmod.RowConfig("block", 128), "0", "0", "0"),
    (softmax_kernel.build("f32", True), cfgmod.RowConfig("block", 256), "0", "0", "0"),  # r47
    (softmax_kernel.build("bf16", True), cfgmod.RowConfig("block", 128), "1", "0", "pairs"),
    (softmax_kernel.build("bf16", True), cfgmod.RowConfig("block", 256), "1", "0", "pairs"),
    (softmax_kernel.build("bf16", True), cfgmod.RowConfig("block", 64), None, "0", "pairs"),
    (softmax_kernel.build("bf16", True), cfgmod.RowConfig("block", 512), None, "pairs", None),
    (rms_norm_kernel.build("f32", "f32", True, False), cfgmod.RowConfig("block", 512), "0", "0",
     "0"),
    (softmax_kernel.build("f32", True), cfgmod.RowConfig("warp", 32, 4), None, None, None),
    (rms_norm_kernel.build("f32", "f32", True, False), cfgmod.RowConfig("block", 256), "1", "0",
     "pairs"),
    (rms_norm_kernel.build("f32", "f32", True, False), cfgmod.RowConfig("block", 128), "0", "0",
     "0"),
    (rms_norm_kernel.build("f32", "f32", True, True), cfgmod.RowConfig("block", 256), "0", "0",
     "0"),
    (rms_norm_kernel.build("bf16", "bf16", True, False), cfgmod.RowConfig("block", 256), None,
     "0", "pairs"),
    (layer_norm_kernel.build("bf16", "bf16", "bf16", True, True, True),
     cfgmod.RowConfig("block", 256), None, "0", "pairs"),
    # blocks of whole warps take the entry of the rows they hold (r47): 160 threads 256's,
    # 96 threads 128's
    (rms_norm_kernel.build("f32", "f32", True, False), cfgmod.RowConfig("block", 160), "1", "0",
     "pairs"),
    (softmax_kernel.build("f32", True), cfgmod.RowConfig("block", 96), "0", "0", "0"),
])
def test_loop_layout_by_kernel_and_block_size(monkeypatch, kernel, cfg, want, h100, h200):
    """The layout a launch plans with when no switch forces one: by the GPU's DRAM bandwidth
    per SM for blocks of <= 256 threads (perf-notes r18: a block per row on the H100, pairs
    on the H200 where the kernel's own choice loops), else measured per kernel and, for block
    layouts, per block size (r11), which is also what ``pairs`` falls back to and what a GPU
    of unknown bandwidth gets; NBKERNELS_ROWS_LOOP overrides it."""
    assert _planned(monkeypatch, kernel, cfg, "2") == \
        [(want, want, 1), (h100, want, 1), (h200, want, 1), ("2", want, 1)]


def test_groups_sharing_vectors_loop_over_the_rows(monkeypatch):
    """16-bit layer_norm beside float32 vectors: blocks of two row groups sharing them loop
    over the rows with one buffer a group on every GPU (one staging of the vectors a block
    for the launch; perf-notes r35: 79% of copy at 8192^2 on the H200 against 68% in pairs,
    and a second buffer costs resident groups), unless NBKERNELS_ROWS_LOOP says otherwise."""
    kernel = layer_norm_kernel.build("bf16", "f32", "f32", True, True, True)
    seen = _planned(monkeypatch, kernel, cfgmod.RowConfig("block", 128), "pairs")
    assert [(m, g) for m, _, g in seen] == [("1", 2)] * 3 + [("pairs", 2)]
