"""Typing errors, arch and PTX-version checks, template rendering, and the spec table."""
import re

import numba
import numpy as np
import pytest
from numba import cuda, types

import nbkernels
from nbkernels import intrinsics as I
from nbkernels.arch import Arch
from nbkernels.intrinsics import factory


def _ptx(fn, sig, cc=(8, 0)):
    return cuda.compile_ptx(fn, sig, cc=cc)[0]


def test_calling_outside_a_kernel_says_so():
    with pytest.raises(nbkernels.IntrinsicUsageError, match=r"did you forget @cuda.jit"):
        I.mma_m16n8k16_bf16_f32((1, 2, 3, 4), (1, 2), (0.0, 0.0, 0.0, 0.0))


def test_wrong_tuple_length_is_a_typing_error_naming_the_argument():
    def k(out):
        d = I.mma_m16n8k16_bf16_f32((np.uint32(1), np.uint32(2)), (np.uint32(1), np.uint32(2)),
                                    (out[0], out[1], out[2], out[3]))
        out[0] = d[0]

    with pytest.raises(Exception, match=r"argument 'a' must be a tuple of 4 x uint32"):
        _ptx(k, (types.float32[:],))


def test_float_where_bits_expected_is_rejected():
    def k(out):
        out[0] = I.ldmatrix_x1(out[1])

    with pytest.raises(Exception, match=r"ldmatrix_x1: argument 'addr' must be an integer"):
        _ptx(k, (types.float32[:],))


def test_wait_group_needs_a_compile_time_constant():
    def k(out, n):
        I.cp_async_wait_group(n)

    with pytest.raises(Exception, match=r"'n' must be a compile-time constant integer"):
        _ptx(k, (types.uint32[:], types.int32))


def test_cp_async_size_is_checked():
    def k(src, out):
        sh = cuda.shared.array(64, numba.uint8)
        I.cp_async_cg(I.smem_addr(sh, 0), I.gmem_addr(src, 0), 8, 8)

    with pytest.raises(Exception, match=r"'cp_size' must be one of \(16,\), got 8"):
        _ptx(k, (types.uint8[:], types.uint8[:]))


def test_wait_group_constant_lands_in_ptx():
    def k(out):
        I.cp_async_wait_group(3)

    assert re.search(r"cp\.async\.wait_group\s+3;", _ptx(k, (types.uint32[:],)))


def test_arch_error_inside_an_inlined_device_function():
    @cuda.jit(device=True, inline="always")
    def helper(x):
        return I.f32_to_tf32(x)

    def k(out, x):
        out[0] = helper(x[0])

    with pytest.raises(nbkernels.ArchError) as info:
        _ptx(k, (types.uint32[:], types.float32[:]), cc=(7, 5))
    assert "f32_to_tf32 (cvt.rna.tf32.f32) needs sm_80" in str(info.value)
    assert "compiled for sm_75" in str(info.value)


def test_ptx_version_check(monkeypatch):
    spec = factory.InstructionSpec(name="fake_new_op", ptx="nanosleep.u32 1;", min_ptx=(99, 0))
    monkeypatch.setattr(factory, "_PTX_ISA_OF_NVVM", (9, 4))
    with pytest.raises(nbkernels.PtxVersionError, match=r"needs PTX ISA 99.0.*writes PTX ISA 9.4"):
        factory.check_target(spec)


def test_nvvm_ptx_isa_is_probed_from_real_output():
    major, minor = factory.nvvm_ptx_isa()
    assert (major, minor) >= (8, 0)


def test_render_template_vectors_braces_parts_and_constants():
    spec = factory.InstructionSpec(
        name="t", ptx="op $d, $a, $b.1, $n, $$x;",
        outputs=(I.Operand("d", types.uint32, 2),),
        inputs=(I.Operand("a", types.uint32, braced=True), I.Operand("b", types.uint32, 2),
                I.Const("n")))
    text = factory.render_template(spec, {"d": ([0, 1], False), "a": ([2], True),
                                          "b": ([3, 4], False)}, {"n": 7})
    assert text == "op {$0, $1}, {$2}, $4, 7, $$x;"


def test_arch_parse_and_satisfies():
    assert Arch.parse("sm_90a") == Arch(9, 0, "a")
    assert Arch.parse((8, 6)) == Arch(8, 6)
    assert Arch.parse("sm_100a") == Arch(10, 0, "a") and Arch.parse("sm_120") == Arch(12, 0)
    assert Arch(9, 0).satisfies(Arch(8, 0))
    assert not Arch(8, 6).satisfies(Arch(8, 9))
    assert not Arch(9, 0).satisfies(Arch(9, 0, "a"))
    assert Arch(9, 0, "a").satisfies(Arch(9, 0, "a"))
    with pytest.raises(nbkernels.NbkernelsError, match=r"expected a name like 'sm_80'"):
        Arch.parse("ampere")


@pytest.mark.parametrize("name", I.SHIPPED)
def test_spec_table_is_complete(name):
    spec = I.REGISTRY[name].spec
    assert spec.simulate is not None
    assert spec.min_arch >= Arch(7, 5)
    assert spec.doc
    if spec.convergent:
        assert spec.warp_collective_sim
    if spec.family in ("cp.async", "ldmatrix", "vector"):
        assert spec.memory, f"{name} touches memory but declares no ~{{memory}} clobber"


def test_memory_and_convergent_attributes_reach_llvm():
    def k(out):
        sh = cuda.shared.array(256, numba.uint16)
        d = I.ldmatrix_x1(I.smem_addr(sh, cuda.threadIdx.x * 8))
        out[0] = d

    from numba.cuda.compiler import compile_cuda

    cres = compile_cuda(k, types.void, (types.uint32[:],), cc=(8, 0))
    llvm = cres.library.get_llvm_str()
    line = next(l for l in llvm.splitlines() if "ldmatrix" in l)
    assert "sideeffect" in line and "~{memory}" in line
    assert "convergent" in line


def test_docs_list_every_shipped_intrinsic():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "intrinsics.md").read_text()
    missing = [n for n in I.SHIPPED if f"`{n}`" not in text]
    assert not missing, f"docs/intrinsics.md does not list {missing}"
