"""The real row kernels, run by numba's simulator, against float64 NumPy references.

One child interpreter runs the whole table (the simulator must be enabled before numba.cuda
is imported); every layout, the three variants forced, odd sizes, non-finite values.
"""
import itertools
import json

import pytest

from .simrun import run_simulated

OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu", "swiglu_packed")
DTYPES = ("float32", "bfloat16", "float16")

# (op, dtype, shape, layout, special, variant): every op x dtype at a default layout, plus
# layouts, variants and values where they differ in what they exercise
CASES = [(op, dt, (3, 40), "contig", None, None) for op, dt in itertools.product(OPS, DTYPES)]
CASES += [(op, dt, shape, lay, None, var) for op, dt, (shape, lay, var) in itertools.product(
    ("rms_norm_residual", "layer_norm", "softmax", "swiglu_packed"), ("bfloat16", "float32"), [
        ((2, 300), "rowstride", "block"),  # 16-bit rows of 303: scalar path, block layout
        ((2, 2, 70), "misaligned", None),  # 3-D, unaligned start
        ((5, 6), "transposed", "warp"),  # copied once
        ((2, 700), "contig", "split"),  # 22 chunks of 32 threads: both passes
        ((1, 2), "contig", "split"),  # one chunk of a split layout
    ])]
CASES += [("softmax", "float32", (4, 90), "contig", "nonfinite", v) for v in (None, "split")]
CASES += [("layer_norm", "float32", (4, 90), "contig", "nonfinite", "split"),
          ("rms_norm", "bfloat16", (4, 90), "contig", "nonfinite", None),
          ("swiglu", "float16", (4, 90), "contig", "nonfinite", None),
          ("softmax", "float16", (3, 50), "contig", "big", None),
          ("softmax", "bfloat16", (2, 600), "contig", "big", "split"),
          ("layer_norm", "bfloat16", (3, 64), "contig", "equal", None),
          ("rms_norm", "float16", (1, 1), "contig", None, None),
          ("softmax", "float32", (0, 8), "contig", None, None),
          ("layer_norm", "float32", (7,), "contig", None, None)]

# Turing's path (no cp.async: rows staged through registers; bf16 rounded in integer code)
SM75_CASES = [(op, dt, (3, 300), "contig", None, var)
              for op in ("rms_norm_residual", "layer_norm", "softmax", "swiglu")
              for dt in ("bfloat16", "float16") for var in (None, "split")]
SM75_CASES += [("softmax", "bfloat16", (3, 50), "contig", "nonfinite", None)]

SCRIPT = r'''
import contextlib, json, sys
import numpy as np
sys.path.insert(0, "tests")
from row_cases import run_case
from nbkernels.arch import Arch
from nbkernels.rows import host
rng = np.random.default_rng()
fails = []
target = host.target_arch(Arch.parse(sys.argv[2])) if len(sys.argv) > 2 else \
    contextlib.nullcontext()
with target:
    for case in json.loads(sys.argv[1]):
        try:
            fails += run_case(tuple(case[:2]) + (tuple(case[2]),) + tuple(case[3:]), rng)
        except Exception as e:
            fails.append(f"{case}: {type(e).__name__}: {e}")
print("RESULT " + json.dumps(fails))
'''


@pytest.mark.parametrize("chunk", range(3))
def test_row_kernels_in_simulator(chunk):
    cases = CASES[chunk::3]
    proc = run_simulated(["-c", SCRIPT, json.dumps(cases)])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])


def test_turing_path_in_simulator():
    proc = run_simulated(["-c", SCRIPT, json.dumps(SM75_CASES), "sm_75"])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])
