"""The asv suite's GEMM case table, on the CPU: every case a benchmark class declares has a
spec, and a forced variant that cannot run a case here is n/a with a reason, never a failure
(session 37's first asv run of the sm90a variant failed its tf32 and int8 cases)."""
import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks_asv"))
gemm = pytest.importorskip("benchmarks.gemm")

H200 = {"cc": (9, 0), "l2": 60 << 20, "variants": ("sm90a", "sm80", "sm75", "simt", "dmma"),
        "kinds": {"sm90a": ("bf16", "f16")}}


def _classes():
    return [c for c in vars(gemm).values()
            if isinstance(c, type) and issubclass(c, gemm._Gemm) and c is not gemm._Gemm]


def test_every_declared_gemm_case_has_a_spec():
    specs = gemm._specs()
    names = {c.__name__ for c in _classes()}
    assert {"Gemm", "GemmLLM", "GemmF64", "GemmF64Dmma"} <= names
    for cls in _classes():
        for params in itertools.product(*cls.params):
            assert (cls.__name__, *params) in specs, (cls.__name__, params)


@pytest.mark.parametrize("variant, dtype, cc, expect", [
    ("sm90a", "bf16", (9, 0), None),
    ("sm90a", "f16", (9, 0), None),
    ("sm90a", "tf32", (9, 0), "computes bf16, f16, not tf32"),
    ("sm90a", "int8", (9, 0), "computes bf16, f16, not int8"),
    ("sm90a", "bf16", (8, 0), "does not run on compute capability (8, 0)"),
    ("sm80", "int8", (9, 0), None),
    ("dmma", "f64", (8, 0), None),
    ("dmma", "f64", (7, 5), "does not run on compute capability (7, 5)"),
    ("simt", "f64", (7, 5), None),
])
def test_a_case_the_variant_cannot_run_is_not_available_with_a_reason(variant, dtype, cc,
                                                                       expect):
    why = gemm._unavailable(variant, dict(H200, cc=cc), dtype)
    if expect is None:
        assert why is None
    else:
        assert expect in why


def test_a_variant_missing_at_a_commit_is_not_available():
    ctx = dict(H200, variants=("sm80", "sm75", "simt"))
    assert "does not exist at this commit" in gemm._unavailable("dmma", ctx, "f64")
    assert "does not exist at this commit" in gemm._unavailable("sm90a", ctx, "bf16")
