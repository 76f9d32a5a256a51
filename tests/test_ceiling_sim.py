"""The mma.sync ceiling kernel (the benchmark's yardstick for the sm_80-class GEMM), run by
numba's simulator against its float64 reference."""
import numpy as np
import pytest

from nbkernels.matmul import ceiling

from .simrun import simulated_result

SCRIPT = r'''
import json, sys
import numpy as np
import nbkernels  # the simulator shims
from nbkernels.matmul import ceiling
kind, iters, exact = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
frags = ceiling.fragments(np.random.default_rng(), 64, kind, exact)
out = np.full((64, 4), np.nan, np.float32)
ceiling.kernel(kind)[1, 64](frags, iters, out)
print("RESULT" + json.dumps({"frags": frags.tolist(), "out": out.tolist()}))
'''


@pytest.mark.parametrize("kind,iters,exact", [("bf16", 3, True), ("f16", 2, True),
                                              ("bf16", 1, False)])
def test_ceiling_kernel_matches_reference(kind, iters, exact):
    res = simulated_result(["-c", SCRIPT, kind, str(iters), "1" if exact else "0"], timeout=600)
    frags = np.array(res["frags"], np.uint32)
    got = np.array(res["out"], np.float64)
    want = ceiling.reference(frags, iters, kind)
    assert np.isfinite(got).all()
    assert np.abs(want).max() > 0  # not a vacuous comparison
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * np.abs(want).max())


def test_reference_sees_a_wrong_lane():
    import ml_dtypes

    frags = ceiling.fragments(np.random.default_rng(), 32, "bf16", exact=True)
    frags[:, 4:] = 0x3F80_3F80  # B all ones: a changed A value moves its whole row of D
    want = ceiling.reference(frags, 1, "bf16")
    # lane 5's first A value plus one (a bit flip of a zero gave a subnormal, invisible in D)
    old = np.array([frags[5, 0] & 0xFFFF], np.uint16).view(ml_dtypes.bfloat16)
    new = (old.astype(np.float32) + 1).astype(ml_dtypes.bfloat16).view(np.uint16)[0]
    frags[5, 0] = (frags[5, 0] & 0xFFFF0000) | int(new)
    got = ceiling.reference(frags, 1, "bf16")
    moved = got != want  # one row of D: 8 values, held by 4 lanes x 2 registers
    assert moved.sum() == 8 and np.all(got[moved] - want[moved] == ceiling.CHAINS)


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="ceiling kind"):
        ceiling.kernel("tf32")

