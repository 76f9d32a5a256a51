#!/usr/bin/env bash
# Session 21, run J (device tool, carry .whl): the warp_shuffles probe with its butterfly sum's
# reference in float32 and the GPU's order (compared bit for bit, random inputs included), over
# 40 seeds, and the test file's GPU probe of it.
. tools/device-preamble.sh
timeout 200 python3 - <<'PY'
from nbkernels.intrinsics import selfcheck
bad = 0
for seed in range(40):
    v = selfcheck.check(selfcheck.run_all(seed=seed, names=["warp_shuffles"]))
    bad += any(m is not None for m in v.values())
    if any(m is not None for m in v.values()):
        print(seed, v)
print(f"warp_shuffles on the GPU: {40 - bad} of 40 seeds bit-exact against the reference")
PY
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_intrinsics_gpu.py -k warp_shuffles 2>&1 | tail -n 2
