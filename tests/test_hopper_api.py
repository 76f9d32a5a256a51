"""The sm_90a layer without a GPU: typing, arch checks, shape variables, tied operands, the
compiled m64n256k16, and the host-side tensor-map checks."""
import re

import numpy as np
import pytest
from numba import cuda, types
from numba.cuda.compiler import compile_cuda

import nbkernels
from nbkernels import tensormap, toolchain
from nbkernels import intrinsics as I
from nbkernels.intrinsics import factory
from nbkernels.intrinsics import wgmma as W

needs_ptxas = pytest.mark.skipif(toolchain.find_tool("ptxas") is None, reason="ptxas not installed")
SM90A = (9, 0, "a")

ZEROS128 = W.zero_accumulator(128)
ACC_RC = cuda.jit(device=True, inline="always")(W.acc_m64nN)


def one_m64n256k16(out):
    """One m64n256k16 bf16 wgmma, as a GEMM main loop issues it (fence / mma / commit / wait)."""
    sh = cuda.shared.array(0, np.uint8)
    t = cuda.threadIdx.x
    base = I.smem_addr(sh, 0)
    a = I.smem_desc(base, 16, 1024, I.SWIZZLE_128B, 0)
    b = I.smem_desc(base + 8192, 16, 1024, I.SWIZZLE_128B, 0)
    acc = I.wgmma_fence_operand_f32(ZEROS128())
    I.wgmma_fence()
    acc = I.wgmma_bf16_f32_ss(acc, a, b, 0, 0, 0)
    I.wgmma_commit_group()
    I.wgmma_wait_group(0)
    acc = I.wgmma_fence_operand_f32(acc)
    for i in range(128):
        out[ACC_RC(t, i)] = acc[i]


@needs_ptxas
def test_m64n256k16_compiles_to_one_hgmma_without_spills():
    ptx = toolchain.compile_ptx_for(one_m64n256k16, (types.float32[:, ::1],), "sm_90a")
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16 \{(%f\d+, ){127}%f\d+\}", ptx)
    asm = toolchain.assemble(ptx, "sm_90a")
    sass = toolchain.disassemble(asm.cubin)
    assert len(re.findall(r"HGMMA\.64x256x16\.F32\.BF16", sass)) == 1
    assert asm.spill_stores == asm.spill_loads == asm.stack_bytes == 0


def _ptx(fn, sig, cc=SM90A):
    return cuda.compile_ptx(fn, sig, cc=cc)[0]


def test_accumulator_length_selects_n_and_wrong_lengths_name_the_allowed_ones():
    def k(out, d):
        acc = (out[0], out[1], out[2])  # 3 registers: no N has N/2 = 3
        acc = I.wgmma_bf16_f32_ss(acc, d, d, 0, 0, 0)
        out[0] = acc[0]

    with pytest.raises(Exception, match=r"wgmma_bf16_f32_ss: argument 'acc' must be a tuple of "
                                        r"N/2 x float32 \(N in 8\.\.256 step 8: lengths 4\.\.128 step 4\)"):
        _ptx(k, (types.float32[:], types.uint64))


def test_int8_shapes_skip_the_ns_the_isa_lacks():
    def k(out, d):
        acc = (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8], out[9],
               out[10], out[11], out[12], out[13], out[14], out[15], out[16], out[17], out[18],
               out[19])  # N = 40: m64n40k32.s32.s8.s8 does not exist
        acc = I.wgmma_s8_s32_ss(acc, d, d, 1)
        out[0] = acc[0]

    with pytest.raises(Exception, match=r"N in 8, 16, 24, 32, 48, 64, .*got UniTuple\(int32 x 20\)"):
        _ptx(k, (types.int32[:], types.uint64))


def test_wgmma_needs_sm_90a_and_says_how_to_compile_for_it():
    def k(out, d):
        acc = I.wgmma_tf32_f32_ss((out[0], out[1], out[2], out[3]), d, d, 0)
        out[0] = acc[0]

    with pytest.raises(nbkernels.ArchError) as info:
        _ptx(k, (types.float32[:], types.uint64), cc=(9, 0))
    msg = str(info.value)
    assert "wgmma_tf32_f32_ss (wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32) needs sm_90a" in msg
    assert "compiled for sm_90" in msg and "compile with cc=(9, 0, 'a')" in msg
    assert "m64n8k8.f32.tf32.tf32" in _ptx(k, (types.float32[:], types.uint64))


def test_transpose_flags_are_compile_time_zero_or_one():
    def k(out, d):
        acc = I.wgmma_f16_f32_ss((out[0], out[1], out[2], out[3]), d, d, 0, 2, 0)
        out[0] = acc[0]

    with pytest.raises(Exception, match=r"'trans_a' must be one of \(0, 1\), got 2"):
        _ptx(k, (types.float32[:], types.uint64))


def test_accumulator_is_tied_in_llvm_and_the_call_is_convergent():
    def k(out, d):
        acc = I.wgmma_bf16_f32_ss((out[0], out[1], out[2], out[3]), d, d, 1, 0, 1)
        for i in range(4):
            out[i] = acc[i]

    cres = compile_cuda(k, types.void, (types.float32[:], types.uint64), cc=SM90A)
    line = next(x for x in cres.library.get_llvm_str().splitlines() if "wgmma.mma_async" in x)
    # 4 outputs, then the 4 accumulator inputs bound to them ("+f"), the descriptors, scale_d
    assert '"=f,=f,=f,=f,0,1,2,3,l,l,r,~{memory}"' in line
    assert "m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $8, $9, %nbk_p, 1, 1, 0, 1;" in line
    assert "convergent" in line and "sideeffect" in line


def test_fence_operand_takes_any_length_and_emits_no_instruction():
    def k(out):
        r = I.wgmma_fence_operand_f32((out[0], out[1], out[2]))
        s = I.wgmma_fence_operand_s32((np.int32(1),))
        out[0] = r[2] + s[0]

    ptx = _ptx(k, (types.float32[:],), cc=(8, 0))
    assert ptx.count("// wgmma_fence_operand") == 2


def test_shape_variable_operands_must_agree():
    spec = factory.InstructionSpec(
        name="test_two_shaped_inputs", ptx="// $N", shape_var=I.ShapeVar("N", (1, 2, 3)),
        outputs=(I.Operand("d", types.uint32, "N"),),
        inputs=(I.Operand("a", types.uint32, "N", tied_to="d"), I.Operand("b", types.uint32, "N")),
        simulate=lambda a, b: a)
    both = factory.build(spec)

    def k(out):
        r = both((out[0], out[1]), (out[0], out[1], out[2]))
        out[0] = r[0]

    with pytest.raises(Exception, match=r"argument 'b' selects N=3, but an earlier argument selected 2"):
        _ptx(k, (types.uint32[:],), cc=(8, 0))


@pytest.mark.parametrize("kw,msg", [
    (dict(outputs=(I.Operand("d", types.uint32, "N"),), inputs=(I.Operand("a", types.uint32),)),
     r"have a variable count but the spec declares no shape_var"),
    (dict(inputs=(I.Operand("a", types.uint32, tied_to="nowhere"),)),
     r"input 'a' is tied to 'nowhere', which must be an output of the same type and count"),
])
def test_malformed_specs_fail_when_built(kw, msg):
    with pytest.raises(nbkernels.IntrinsicUsageError, match=msg):
        factory.build(factory.InstructionSpec(name="test_bad_shape_spec", ptx="// x", **kw))


def test_braced_shape_placeholder_renders_next_to_letters():
    spec = factory.InstructionSpec(name="t", ptx="op.m64n${N}k16 $d;",
                                   outputs=(I.Operand("d", types.uint32),))
    assert factory.render_template(spec, {"d": ([0], False)}, {"N": 96}) == "op.m64n96k16 $0;"


def test_zero_accumulator_is_a_device_function_of_zeros():
    z = W.zero_accumulator(5, np.int32)
    assert z.py_func() == (0, 0, 0, 0, 0) and z is W.zero_accumulator(5, np.int32)
    with pytest.raises(ValueError, match=r"nregs must be in \[1, 128\], got 129"):
        W.zero_accumulator(129)


def test_accumulator_layout_covers_the_tile_once():
    for n in (8, 24, 256):
        seen = {W.acc_m64nN(t, i) for t in range(128) for i in range(n // 2)}
        assert seen == {(r, c) for r in range(64) for c in range(n)}
    for esize, k in ((2, 16), (4, 8), (1, 32)):
        per = 4 // esize
        seen = {W.A_LAYOUTS[esize](t, i) for t in range(128) for i in range(4 * per)}
        assert seen == {(r, c) for r in range(64) for c in range(k)}


@pytest.mark.parametrize("kw,msg", [
    (dict(box=(64, 65)), r"box.s inner extent must be a multiple of 16 bytes"),
    (dict(box=(64, 128)), r"with a 128-byte swizzle the box's inner extent must be at most 128"),
    (dict(box=(300, 64)), r"every box dimension must be in \[1, 256\]"),
    (dict(strides=(200, 2)), r"outer strides must be multiples of 16 bytes"),
    (dict(strides=(192, 4)), r"innermost axis must be contiguous"),
    (dict(swizzle=96), r"swizzle must be one of \(0, 32, 64, 128\)"),
    (dict(dtype=np.complex64), r"dtype must be one of"),
    (dict(ptr=8), r"global address must be 16-byte aligned"),
])
def test_tensor_map_parameters_are_checked_before_the_driver(kw, msg):
    args = dict(ptr=1 << 20, dtype=np.float16, shape=(100, 96), strides=(192, 2), box=(64, 64),
                swizzle=128)
    args.update(kw)
    with pytest.raises(nbkernels.NbkernelsError, match="encode_tiled: (the )?" + msg):
        tensormap.encode_tiled(**args)


@pytest.mark.parametrize("kw,msg", [
    (dict(box=(64, 65)), r"box.s inner extent must be a multiple of 16 bytes"),
    (dict(strides=(200, 2)), r"outer strides must be multiples of 16 bytes"),
    (dict(ptr=8), r"global address must be 16-byte aligned"),
])
def test_the_per_geometry_encoder_checks_what_encode_tiled_checks(kw, msg):
    """The map cache's encoder: its parameters checked when it is made, the address when it is
    called, both before the driver."""
    args = dict(dtype=np.float16, shape=(100, 96), strides=(192, 2), box=(64, 64), swizzle=128)
    ptr = kw.pop("ptr", 1 << 20)
    args.update(kw)
    with pytest.raises(nbkernels.NbkernelsError, match="encode_tiled: (the )?" + msg):
        tensormap.encoder(**args)(ptr)


def test_tensor_map_box_bytes_is_the_tx_count():
    tm = tensormap.TensorMap(np.zeros(128, np.uint8), np.dtype(np.float16), (100, 96), (192, 2),
                             (64, 64), 128, False)
    assert tm.box_bytes == 8192


def test_driver_arguments_are_innermost_first_in_cuda_bindings_types():
    from cuda.bindings import driver as drv

    args = tensormap.driver_args(np.dtype(np.float16), (4, 100, 96), (38400, 192, 2),
                                 (2, 64, 32), 64, (1, 1, 1), 256, False, 1 << 20)
    assert args[0] == drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16 and args[1] == 3
    assert [int(v) for v in args[3]] == [96, 100, 4] and [int(v) for v in args[4]] == [192, 38400]
    assert [int(v) for v in args[5]] == [32, 64, 2] and [int(v) for v in args[6]] == [1, 1, 1]
    assert all(isinstance(v, drv.cuuint64_t) for v in args[3] + args[4])
    assert all(isinstance(v, drv.cuuint32_t) for v in args[5] + args[6])
    assert args[8] == drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B
    assert args[9] == drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B
    try:  # marshalling must pass: without a driver the call fails finding libcuda instead
        drv.cuTensorMapEncodeTiled(*args)
    except TypeError as e:
        pytest.fail(f"cuda-bindings rejected the arguments: {e}")
    except Exception:
        pass
