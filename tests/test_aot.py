"""nbkernels compile: the GEMM catalogue per arch, the failure rules, and real builds (no GPU)."""
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap

import pytest

from nbkernels import aot, toolchain
from nbkernels.arch import LIMITS, Arch
from nbkernels.compat import Facts
from nbkernels.matmul import aot as gemm_aot
from nbkernels.rows import aot as rows_aot

from .simrun import ROOT

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None,
                                 reason="ptxas not installed (pip install 'nbkernels[test]')")


def _names(todo):
    return {v.name for v, _ in todo}


def test_catalogue_per_arch():
    todo, na = aot.plan([Arch(7, 5)])
    built, skipped = _names(todo), {r.variant for r in na}
    assert {b for b in built if b.startswith("gemm/")} == {
        "gemm/sm75/f16", "gemm/sm75/f16/splitk", "gemm/reduce/f16", "gemm/simt/f32",
        "gemm/simt/f64"}
    # every row kernel builds for every arch (sm_75 stages rows without cp.async), and so do
    # the narrow rows' builds (perf-notes r54) and softmax's shifted main kernel (r59; its
    # register-row kernel needs sm_80), and softmax's lanes layout (r63)
    assert {b for b in built if b.startswith("rows/")} == {
        f"rows/{op}/{k}" for op in rows_aot.OPS for k in rows_aot.KINDS} | {
        f"rows/{op}_narrow/{k}" for op in rows_aot.NARROW_OPS for k in rows_aot.KINDS} | {
        f"rows/{op}/{k}" for op in rows_aot.SPLIT_OPS + rows_aot.SHIFTED_OPS[:3] +
        rows_aot.LANES_OPS for k in rows_aot.KINDS} | {
        "rows/padcopy/u16", "rows/padcopy/u32"}
    assert {f"rows/softmax_shifted_regs/{k}" for k in ("f16", "bf16")} <= skipped
    assert {f"gemm/sm80/{k}" for k in gemm_aot.SM80_KINDS} <= skipped
    assert all(r.status == "n/a" and ("needs sm_80" in r.problems[0] or
                                      "needs sm_90a" in r.problems[0]) for r in na)
    sm90a = {f"gemm/sm90a/{k}/{t}{s}" for k in ("bf16", "f16") for t in ("nn", "nt")
             for s in ("", "/splittail")}
    for arch in (Arch(8, 0), Arch(8, 9), Arch(9, 0, "a")):
        todo, na = aot.plan([arch])
        # the Hopper GEMM is arch-specific: built for sm_90a only, n/a (said why) elsewhere
        assert {r.variant for r in na} == (set() if arch.suffix else sm90a)
        assert all("needs sm_90a" in r.problems[0] for r in na)
        assert {f"gemm/sm80/{k}" for k in gemm_aot.SM80_KINDS} <= _names(todo)
        assert {"gemm/sm75/f16", "gemm/reduce/bf16", "gemm/simt/f64"} <= _names(todo)
        assert (sm90a <= _names(todo)) == bool(arch.suffix)
    names = [v.name for v in gemm_aot.aot_variants(Arch(8, 0))]
    assert len(names) == len(set(names))


def test_variants_travel_to_worker_processes():
    for v in gemm_aot.aot_variants(Arch(8, 0)):
        assert pickle.loads(pickle.dumps(v)).name == v.name


def test_default_tiles_fit_each_arch():
    for arch in (Arch(7, 5), Arch(8, 0), Arch(8, 6), Arch(8, 9), Arch(9, 0, "a")):
        for kind in gemm_aot.SM80_KINDS:
            tile = gemm_aot.default_tile(kind, arch)
            assert tile.smem_bytes(kind) <= LIMITS[arch.base].block_smem, (arch, kind, tile)


def test_wide_k_tile_where_two_blocks_fit_an_sm():
    """16-bit GEMMs that fill the GPU take config.WIDE_K where two of its 96 KB blocks fit
    (Hopper), the 64-byte tile elsewhere; other kinds never take it; the autotuner measures it
    for 16-bit kinds only."""
    from nbkernels.matmul import config

    for kind in ("bf16", "f16"):
        assert gemm_aot.default_tile(kind, Arch(9, 0, "a")) == config.WIDE_K
        assert config.WIDE_K in config.candidates(kind)
        for arch in (Arch(8, 0), Arch(8, 6), Arch(8, 9)):
            assert gemm_aot.default_tile(kind, arch) == config.CANDIDATES[0], arch
        # too few 128x128 tiles to fill 132 SMs: a smaller tile, as before
        assert config.heuristic(kind, 512, 512, 4096, 1, 132, 227 * 1024).bm == 64
    for kind in ("tf32", "s8", "f64"):
        assert gemm_aot.default_tile(kind, Arch(9, 0, "a")) != config.WIDE_K
        assert config.WIDE_K not in config.candidates(kind)
    assert config.WIDE_K.smem_bytes("bf16") == 96 * 1024


def test_verdict_rules():
    ok = aot.Row("x", "sm_80", registers=100, spill_stores=0, spill_loads=0,
                 tensor_ops=["HMMA.16816.F32"])
    assert aot.verdict(ok, "HMMA") == []
    spilled = aot.Row("x", "sm_80", registers=255, spill_stores=24, spill_loads=12,
                      tensor_ops=["HMMA.16816.F32"])
    assert "spills (24 B stores, 12 B loads)" in aot.verdict(spilled, "HMMA")
    assert "no IMMA instruction in the SASS" in aot.verdict(ok, "IMMA")
    assert aot.verdict(aot.Row("x", "sm_80", tensor_ops=[]), None) == []
    # a variant that accepts spills outside loops: judged by where they sit
    assert aot.verdict(spilled, "HMMA", loop_spills=0) == []
    assert "spills (24 B stores, 12 B loads) inside a loop" in aot.verdict(spilled, "HMMA", 3)
    assert "cannot tell where" in aot.verdict(spilled, "HMMA", None)[0]
    # a stack frame without spills: an array in local memory; it fails where a loop uses it
    stacked = aot.Row("x", "sm_75", registers=116, spill_stores=0, spill_loads=0, stack=128,
                      tensor_ops=[])
    assert "local memory inside a loop (12 LDL/STL, a 128 B stack frame)" in \
        aot.verdict(stacked, None, False, 12)[0]
    assert aot.verdict(stacked, None, False, 0) == []  # used outside loops only
    assert aot.verdict(stacked, None, False, None) == []  # SASS not read: no judgment
    # named barriers: no more than the kernel declares (the row planner counts them)
    barred = aot.Row("x", "sm_90a", registers=128, spill_stores=0, spill_loads=0, barriers=16,
                     tensor_ops=[])
    assert aot.verdict(barred, None, barriers=16) == []
    assert "uses 16 named barriers a block, declares 1" in aot.verdict(barred, None,
                                                                        barriers=1)[0]
    assert aot.verdict(barred, None) == []  # declared nowhere: not checked


def test_assembler_log_gives_the_named_barriers():
    from nbkernels import toolchain

    log = "ptxas info    : Used 128 registers, used 16 barriers, 384 bytes smem"
    assert toolchain._first_int("barriers", log) == 16
    assert toolchain._first_int("registers", log) == 128
    assert toolchain._first_int("barriers", "ptxas info : Used 40 registers") == 0


SASS_WITH_LOOP = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   STL [R1], R2 ;
.L_x_3:
        /*0020*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0030*/                   {} ;
        /*0040*/               @P0 BRA `(.L_x_3) ;
        /*0050*/                   LDL R2, [R1] ;
        /*0060*/               @P1 BRA `(.L_x_4) ;
.L_x_4:
        /*0070*/                   EXIT ;
"""


@pytest.mark.parametrize("body,want", [("NOP", 0), ("LDL R5, [R1+0x4]", 1),
                                       ("STL [R1+0x8], R6", 1)])
def test_local_accesses_are_counted_inside_loops_only(body, want):
    """The STL before the loop, the LDL after it and the forward branch do not count; a spill
    instruction between the label and the branch back to it does."""
    from nbkernels import toolchain

    assert toolchain.local_accesses_in_loops(SASS_WITH_LOOP.format(body)) == want


def test_assembler_choice():
    f = Facts(nvvm_ptx_isa=(9, 4), ptxas=(13, 4), ptxas_where="p", nvjitlink=(13, 5))
    assert aot.pick_assembler(f)[0] == "ptxas"
    f.ptxas = (13, 0)  # older than NVVM: nvJitLink reads 9.4
    assert aot.pick_assembler(f)[0] == "nvjitlink"
    f.nvjitlink = None
    assert aot.pick_assembler(f)[0] == "ptxas"  # fails with ptxas's own message
    f.ptxas = None
    assert aot.pick_assembler(f)[0] is None


def _compile(tmp_path, *args, extra_path=None):
    paths = [str(ROOT)] + ([str(extra_path)] if extra_path else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "nbkernels", "compile", "--out",
                           str(tmp_path / "out"), "--jobs", "2", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=1200)


def test_compile_names_a_bad_arch_without_a_traceback(tmp_path):
    proc = _compile(tmp_path, "--arch", "sm_80,all")
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "python -m nbkernels compile: arch: expected a name like 'sm_80'" in proc.stderr
    assert "got 'all'" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@needs_ptxas
def test_compile_gemm_variants_for_sm80_and_sm75(tmp_path):
    proc = _compile(tmp_path, "--arch", "sm_75,sm_80",
                    "--only", "gemm/sm80/f16,gemm/simt/f32,gemm/reduce/bf16")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    rows = {(r["variant"], r["arch"]): r for r in report["rows"]}
    assert rows[("gemm/sm80/f16", "sm_75")]["status"] == "n/a"
    assert rows[("gemm/reduce/bf16", "sm_75")]["status"] == "n/a"
    f16 = rows[("gemm/sm80/f16", "sm_80")]
    assert f16["status"] == "ok" and f16["registers"] > 0 and f16["spill_stores"] == 0
    assert any(op.startswith("HMMA.16816") for op in f16["tensor_ops"]), f16
    assert f16["dynamic_smem"] == gemm_aot.default_tile("f16", Arch(8, 0)).smem_bytes("f16")
    simt = rows[("gemm/simt/f32", "sm_75")]
    assert simt["status"] == "ok" and simt["tensor_ops"] == []
    ptx = (tmp_path / "out" / "sm_80" / "gemm__sm80__f16.ptx").read_text()
    assert ".target sm_80" in ptx and "mma.sync.aligned.m16n8k16" in ptx
    assert (tmp_path / "out" / "sm_80" / "gemm__sm80__f16.cubin").read_bytes()[:4] == b"\x7fELF"
    assert "n/a for this arch (needs sm_80)" in proc.stdout


#: instructions a thread executes per row in the row loop (nbkernels.rows.sasscount, sm_90a,
#: the path of a thread whose elements all lie inside the row), at most: what they measured
#: when the unmasked path went in (317 and 408; 457 and 553 before; rms_norm's 64-element
#: build 544 for twice the elements), plus 5% for a ptxas that schedules differently
ROW_LOOP_BOUNDS = {"rows/rms_norm/bf16": 333, "rows/softmax/bf16": 428,
                   "rows/rms_norm_wide/bf16": 571}


@needs_ptxas
def test_row_loop_sass_of_a_full_thread(tmp_path):
    from nbkernels.rows import sasscount

    proc = _compile(tmp_path, "--arch", "sm_90a", "--only", ",".join(ROW_LOOP_BOUNDS))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for row in report["rows"]:
        assert row["status"] == "ok" and row["spill_stores"] == 0, row
    for name, bound in ROW_LOOP_BOUNDS.items():
        sass = (tmp_path / "out" / "sm_90a" / (name.replace("/", "__") + ".sass")).read_text()
        ops, *_ = sasscount.count(sass, 4)
        copies = [op for op in ops if op.startswith("LDGSTS")]
        # plain 16-byte copies (no zero-fill byte counts), 1/sqrt and 1/sum as one MUFU, no
        # IEEE division (FCHK) in the loop
        assert copies == ["LDGSTS.E.BYPASS.128"], (name, copies)
        assert "FCHK" not in ops and ops["MUFU.RSQ" if "rms" in name else "MUFU.RCP"], ops
        assert sum(ops.values()) <= bound, (name, sum(ops.values()), bound)


def test_compile_through_nvjitlink(tmp_path):
    pytest.importorskip("cuda.bindings.nvjitlink")
    proc = _compile(tmp_path, "--arch", "sm_86", "--only", "gemm/simt/f64",
                    "--assembler", "nvjitlink")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    row = json.loads((tmp_path / "out" / "report.json").read_text())["rows"][0]
    assert row["registers"] > 0 and row["status"] == "ok", row


FAKE_FAMILY = '''
"""A kernel family with one good variant and one of each way to fail."""
from numba import types

from nbkernels import intrinsics as I
from nbkernels.aot import Variant


def _good(arch):
    def k(x, y):
        y[0] = x[0] * 2.0
    return k, (types.float32[::1], types.float32[::1]), None, 0


def _uses_sm80(arch):
    def k(x, y):
        y[0] = I.cvt_f32_to_bf16(x[0])
    return k, (types.float32[::1], types.uint16[::1]), None, 0


def _spills(arch):
    # 64 values live across a loop of run-time length, with 32 registers per thread allowed
    n = 64
    src = ["def k(x, y):"] + [f"    v{i} = x[{i}]" for i in range(n)]
    src += ["    for t in range(int(x[64])):"]
    src += [f"        v{i} = v{i} * v{(i + 1) % n} + v{(i + 7) % n}" for i in range(n)]
    src += [f"    y[{i}] = v{i}" for i in range(n)]
    ns = {}
    exec("\\n".join(src), ns)
    return ns["k"], (types.float32[::1], types.float32[::1]), (1024, 2), 0


def aot_variants(arch):
    return [Variant("fake/good", "sm_75", _good),
            Variant("fake/mislabelled", "sm_75", _uses_sm80),
            Variant("fake/no-mma", "sm_75", _good, "HMMA"),
            Variant("fake/spills", "sm_75", _spills),
            Variant("fake/hopper", "sm_90a", _good)]
'''


@needs_ptxas
def test_compile_fails_naming_each_bad_variant(tmp_path):
    (tmp_path / "fake_family.py").write_text(textwrap.dedent(FAKE_FAMILY))
    proc = _compile(tmp_path, "--arch", "sm_75", "--family", "fake_family", extra_path=tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr[-2000:]
    assert "FAILED: fake/mislabelled for sm_75: ArchError: cvt_f32_to_bf16" in out, out
    assert "FAILED: fake/no-mma for sm_75: no HMMA instruction in the SASS" in out, out
    assert "FAILED: fake/spills for sm_75: spills" in out, out
    assert "FAILED: fake/good" not in out and "n/a for this arch (needs sm_90a)" in out, out


@pytest.mark.parametrize("probe", ["mma_m16n8k16_bf16_f32"])
def test_a_shared_front_end_gives_each_arch_the_ptx_of_its_own_compile(probe):
    """sm_80, sm_86, sm_89 and sm_90a take NVVM's PTX of one front end (typed for sm_80, built
    once): the same PTX, but for numba's numbering, as a whole compile for each arch."""
    import numba
    import numpy as np
    from numba import cuda

    from nbkernels.intrinsics import probes

    p = probes.PROBES[probe]
    inp = p.make_inputs(np.random.default_rng(), True)
    sig = tuple(numba.typeof(a) for a in [*inp.values(), *p.outputs(inp).values()])
    front_ends = {}
    for arch in (Arch(8, 0), Arch(8, 6), Arch(8, 9), Arch(9, 0, "a")):
        shared = aot._ptx(p.kernel.py_func, sig, arch, None, front_ends)
        alone = cuda.compile_ptx(p.kernel.py_func, sig, cc=arch.cc)[0]
        assert f".target {arch}" in shared
        assert aot.numbered_out(shared) == aot.numbered_out(alone), arch
    assert [[b[2:] for b in built] for built in front_ends.values()] == [[(Arch(8, 0), ())]]
    # a front end serves the archs that offer all its own arch does: sm_90a's serves no other
    assert aot.shares_front_end(Arch(7, 5), Arch(9, 0, "a"))
    assert aot.shares_front_end(Arch(8, 0), Arch(10, 0))
    assert not aot.shares_front_end(Arch(9, 0, "a"), Arch(10, 0))
    assert not aot.shares_front_end(Arch(8, 6), Arch(8, 0))


def test_a_kernel_whose_lowering_picks_by_target_shares_only_where_the_pick_agrees():
    """A lowering that asks ``target_satisfies`` (as dmma's MMA group: m16n8k16 from sm_90,
    m8n8k4 below) gets a front end per answer: sm_80's serves sm_86 and sm_89, not sm_90a."""
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    from nbkernels.arch import target_satisfies

    @intrinsic
    def from_sm90(typingctx):
        def codegen(context, builder, sig, args):
            return ir.Constant(ir.IntType(32), 90 if target_satisfies(Arch(9, 0)) else 80)

        return types.int32(), codegen

    def kernel(out):
        out[0] = from_sm90()

    sig = (types.int32[::1],)
    front_ends = {}
    archs = (Arch(8, 0), Arch(8, 6), Arch(9, 0, "a"), Arch(10, 0))
    ptx = {arch: aot._ptx(kernel, sig, arch, None, front_ends) for arch in archs}
    (built,) = front_ends.values()
    assert [(b[2], b[3]) for b in built] == [(Arch(8, 0), (Arch(9, 0),)),
                                            (Arch(9, 0, "a"), (Arch(9, 0),)),
                                            (Arch(10, 0), (Arch(9, 0),))]
    for arch in archs:
        want = 90 if arch.base >= (9, 0) else 80
        assert re.search(rf"(mov\.u32\s+%r\d+|st\.global\.[bu]32\s+\[%rd\d+\]), {want};",
                         ptx[arch]), arch
    assert aot.shares_front_end(Arch(8, 0), Arch(8, 9), (Arch(9, 0),))
    assert not aot.shares_front_end(Arch(8, 0), Arch(10, 0), (Arch(9, 0),))


def test_validate_plans_gemm_tiles_for_the_target_shared_memory():
    """validate --as sm_86 on a Hopper GPU runs the tile an RTX 30 would: the f64 tile that puts
    two 72 KB blocks on an SM fits an A100's 164 KB but not the 99 KB of sm_86, so 128x128
    takes its place there."""
    import numpy as np

    from nbkernels.matmul import plan
    from nbkernels.smem import device_limits, planned_for

    a = np.random.default_rng().standard_normal((4096, 4096))
    if device_limits()[1] < 2 * 72 * 1024 + 2048:
        pytest.skip("this GPU fits one 72 KB f64 block per SM already")
    own = plan(a, a).tile
    assert (own.bm, own.bn, own.min_blocks) == (128, 64, 2)
    with planned_for("sm_80"):
        assert device_limits()[1] == 163 * 1024
        assert plan(a, a).tile == own
    with planned_for("sm_86"):
        rtx = plan(a, a).tile
        assert device_limits()[1] == 99 * 1024
    assert (rtx.bm, rtx.bn) == (128, 128) and rtx.smem_bytes("f64") <= 99 * 1024
    assert plan(a, a).tile == own  # the cap ends with the block
