"""Bad input to nbkernels.gemm: a clear error naming the argument, and nothing modified.

These run without a GPU: validation happens in ``plan`` before anything is launched.
"""
import ml_dtypes
import numpy as np
import pytest

import nbkernels
from nbkernels import NbkernelsError
from nbkernels.matmul import TileConfig, plan

BF16 = np.dtype(ml_dtypes.bfloat16)


class FakeDeviceArray:
    """Something with __cuda_array_interface__ (no memory behind it: plan never touches it)."""

    def __init__(self, shape, typestr, ptr=0x7000_0000_0000, readonly=False, **extra):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (ptr, readonly), "version": 3, "strides": None,
                                         **extra}


def _readonly(x):
    x.flags.writeable = False
    return x


def _ops(m=32, k=16, n=24, dtype=np.float16):
    rng = np.random.default_rng()
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


CASES = [
    (lambda a, b: plan(a, b[:-1]), r"a\.shape\[-1\] \(K=16\) must equal b\.shape\[-2\] \(got 15\)"),
    (lambda a, b: plan(a, b.astype(np.float32)),
     r"a and b must have the same dtype, got a float16 and b float32; cast one"),
    (lambda a, b: plan(a.astype(np.complex64), b.astype(np.complex64)),
     r"a has dtype complex64; expected one of"),
    (lambda a, b: plan(a.astype(np.int16), b.astype(np.int16)), r"a has dtype int16"),
    (lambda a, b: plan(a[0], b), r"a must be 2-D or 3-D \(batched\), got 1-D"),
    (lambda a, b: plan(np.stack([a] * 3), np.stack([b] * 2)),
     r"batch sizes 3 \(a\) and 2 \(b\) do not broadcast"),
    (lambda a, b: plan(a, b, out=np.empty((32, 25), np.float16)),
     r"out must have shape \(32, 24\), got \(32, 25\)"),
    (lambda a, b: plan(a, b, out=np.empty((32, 24), np.float32)),
     r"out must have dtype float16 \(the result of float16 inputs\), got float32"),
    (lambda a, b: plan(a, b, np.empty((3, 24), np.float16)),
     r"c of shape \(3, 24\) does not broadcast to the result shape \(32, 24\)"),
    (lambda a, b: plan(a, b, np.empty((24,), np.float32)),
     r"c must have the result dtype float16, got float32"),
    (lambda a, b: plan(a, b, precision="tf32"),
     r"precision applies to float32 inputs only; a is float16"),
    (lambda a, b: plan(a.astype(np.float32), b.astype(np.float32), precision="fast"),
     r"precision must be one of \('tf32', '3xtf32', 'fp32'\) or None, got 'fast'"),
    (lambda a, b: plan(a, b, alpha="2"), r"alpha must be a real number, got '2'"),
    (lambda a, b: plan(a.astype(np.int8), b.astype(np.int8), alpha=0.5),
     r"int8 GEMM takes integer alpha and beta"),
    (lambda a, b: plan(a, b, variant="sm70"),
     r"variant must be one of \('sm90a', 'sm80', 'sm75', 'simt'.*\), got 'sm70'"),
    (lambda a, b: plan(a, b, variant="simt"), r"the simt variant computes float32/float64 only"),
    (lambda a, b: plan(a.astype(BF16), b.astype(BF16), variant="sm75"),
     r"bf16 needs sm_80 tensor cores"),
    (lambda a, b: plan(a, FakeDeviceArray((16, 24), "<f2")),
     r"a is a host \(NumPy/CPU\) array but b is on GPU"),
    (lambda a, b: plan(a, FakeDeviceArray((16, 24), "<V2")),
     r"b: its __cuda_array_interface__ typestr '<V2' does not say which 16-bit type"),
    (lambda a, b: plan(a, [[1.0]]), r"b: expected a NumPy, CuPy or torch array"),
    (lambda a, b: plan(a, b, out=_readonly(np.empty((32, 24), np.float16))),
     r"gemm: out is read-only \(flags.writeable is False\); expected a writable array"),
    (lambda a, b: plan(FakeDeviceArray((32, 16), "<f2"), FakeDeviceArray((16, 24), "<f2"),
                       out=FakeDeviceArray((32, 24), "<f2", readonly=True)),
     r"gemm: out is read-only \(its __cuda_array_interface__ data is marked read-only\)"),
    (lambda a, b: plan(a, FakeDeviceArray((16, 24), "<f2", mask=FakeDeviceArray((16, 24), "|b1"))),
     r"b: its __cuda_array_interface__ has a mask; expected an unmasked array"),
    (lambda a, b: plan(a, b, tile=TileConfig(256, 256, 64, 4, 4, 8)),
     r"needs 262144 B of shared memory; this device allows"),
    (lambda a, b: plan(a, b, out=np.lib.stride_tricks.as_strided(np.empty(24, np.float16),
                                                                 (32, 24), (0, 2))),
     r"out must not overlap itself"),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_bad_input_is_a_clear_error_and_changes_nothing(i):
    call, pattern = CASES[i]
    a, b = _ops()
    a0, b0 = a.copy(), b.copy()
    with pytest.raises(NbkernelsError, match=pattern):
        call(a, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_out_is_untouched_when_the_call_is_rejected():
    a, b = _ops()
    out = np.full((32, 25), 7, np.float16)
    with pytest.raises(NbkernelsError):
        nbkernels.gemm(a, b, out=out)
    assert (out == 7).all()


def test_tile_config_validation():
    with pytest.raises(NbkernelsError, match=r"warp tile 40x64 must be a multiple of 16x16"):
        TileConfig(80, 128, 64, 2, 2, 4)
    with pytest.raises(NbkernelsError, match=r"bk_bytes must be 64 or 128"):
        TileConfig(128, 128, 32, 2, 2, 4)


def test_env_tile_is_parsed_and_checked(monkeypatch):
    a, b = _ops()
    monkeypatch.setenv("NBKERNELS_TILE", "128,wide")
    with pytest.raises(NbkernelsError, match=r"NBKERNELS_TILE: expected 'bm,bn,bk_bytes"):
        plan(a, b)
    monkeypatch.setenv("NBKERNELS_TILE", "64,64,64,2,2,3")
    assert plan(a, b).tile == TileConfig(64, 64, 64, 2, 2, 3)


def test_explain_says_what_and_why():
    a, b = _ops(200, 64, 72)
    text = nbkernels.explain(a, np.asfortranarray(b))  # host operands go over as C-contiguous
    assert "variant: sm80" in text and "a K-major, b N-major" in text
    assert "cp.async 16 B" in text and "tile:" in text and "why:" in text
    text = nbkernels.explain(a[:, 1:], b[1:])
    assert "ordinary loads" in text and "not 16-byte aligned" in text
    text = nbkernels.explain(a.astype(np.float32), b.astype(np.float32))
    assert "(3xtf32)" in text
    text = nbkernels.explain(a.astype(np.int8)[:, ::2], b.astype(np.int8)[::2])
    assert "copy of b: s8 takes K-major (column-major) b only" in text


def test_no_gpu_and_no_simulator_says_how_to_run():
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present")
    a, b = _ops()
    with pytest.raises(NbkernelsError, match=r"no CUDA GPU found; set NUMBA_ENABLE_CUDASIM=1"):
        nbkernels.gemm(a, b)


def test_plan_uses_a_stored_autotune_winner(monkeypatch):
    """The lookup path of plan() on a (pretend) GPU, without one: a stored winner is used."""
    from nbkernels import Arch
    from nbkernels.matmul import api, tuning

    winner = TileConfig(64, 128, 64, 2, 2, 4)
    monkeypatch.setattr(api, "device_arch", lambda: Arch(8, 0))
    monkeypatch.setattr(tuning, "lookup", lambda *args: winner)
    a, b = _ops(300, 64, 200)
    p = plan(a, b)
    assert p.tile == winner and any("autotuner" in r for r in p.reasons)
    monkeypatch.setattr(tuning, "lookup", lambda *args: None)
    assert plan(a, b).tile != winner


def test_split_k_is_planned_for_few_tiles_and_long_k(monkeypatch):
    a, b = _ops(16, 4096, 4096)
    p = plan(a, b)
    assert p.splits > 1 and p.kchunk % p.tile.bk("f16") == 0
    assert p.splits * p.kchunk >= 4096 > (p.splits - 1) * p.kchunk
    assert "split-K" in p.describe()
    assert plan(*_ops(4096, 64, 4096)).splits == 1  # enough output tiles: no split
    monkeypatch.setenv("NBKERNELS_SPLITS", "3")
    assert plan(*_ops(200, 300, 64)).splits == 3


# --- out sharing memory with an input ------------------------------------------------------
def _dev(shape, ptr, typestr="<f4", strides=None):
    x = FakeDeviceArray(shape, typestr, ptr)
    x.__cuda_array_interface__["strides"] = strides
    return x


P, Q = 0x7000_0000_0000, 0x7100_0000_0000  # a's and b's allocations: 64 x 64 float32 each


@pytest.mark.parametrize("out_ptr, copied", [
    (P, {"a"}),  # gemm(a, b, out=a)
    (Q + 10 * 256, {"b"}),  # out starts inside b
    (P + 64 * 256 - 4, {"a"}),  # out's first element is a's last
    (P + 64 * 256, set()),  # out right after a: separate
    (0x7200_0000_0000, set()),
])
def test_an_input_that_shares_memory_with_out_is_copied_first(out_ptr, copied):
    a, b = _dev((64, 64), P), _dev((64, 64), Q)
    p = plan(a, b, out=_dev((64, 64), out_ptr), precision="tf32")
    got = {op for op, why in p.copies if "shares memory with out" in why}
    assert got == copied
    assert all(getattr(p, f"{op}_kmajor") for op in copied)  # the copy is K-major
    if copied:
        assert "shares memory with out: copied first" in p.describe()


def test_an_input_shared_with_out_is_copied_for_every_variant():
    a, b = _dev((64, 64), P, "<f8"), _dev((64, 64), Q, "<f8")
    for prec in (None, "fp32"):
        x, y = (a, b) if prec is None else (_dev((64, 64), P), _dev((64, 64), Q))
        p = plan(x, y, out=y, precision=prec)
        assert [op for op, why in p.copies if "shares memory" in why] == ["b"], p.variant


def test_c_may_be_out_itself_and_nothing_in_between():
    a, b = _dev((64, 64), P), _dev((64, 64), Q)
    c = _dev((64, 64), 0x7200_0000_0000)
    p = plan(a, b, c, beta=1.0, out=_dev((64, 64), 0x7200_0000_0000), precision="tf32")
    assert not [op for op, why in p.copies if "shares memory" in why]
    transposed = _dev((64, 64), 0x7200_0000_0000, strides=(4, 256))
    with pytest.raises(NbkernelsError, match="c shares memory with out but not element for "
                                             "element"):
        plan(a, b, transposed, beta=1.0, out=c, precision="tf32")
    row = _dev((64,), 0x7200_0000_0000 + 256)  # a bias row inside out, broadcast over it
    with pytest.raises(NbkernelsError, match="pass a copy of c"):
        plan(a, b, row, beta=1.0, out=c, precision="tf32")
