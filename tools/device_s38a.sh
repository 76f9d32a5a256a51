#!/usr/bin/env bash
# Planned first run of the session after 37 (carry .whl with numpy 2.4 and asv's wheels, and
# benchmarks_asv/bundle from `benchmarks_asv/run.sh --bundle`; H200): what session 37 changed
# after its device time ran out, then the asv suite's fixed version on main's head.
#  1. the demo's GPU test on the code whose cuBLAS timing moved into demo._cublas_seconds;
#  2. matmul.bench's new int8 peer (torch._int_mm, b column-major) at 4096^3 and 8192^3;
#  3. asv on main's head (H200 has f8512af, measured by the suite before its fix).
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 150 140 demo.txt tests/test_demo.py
timeout 150 python3 -m nbkernels.matmul.bench --dtypes s8 --sizes 4096,8192 --reps 20 2>&1 |
    grep -v Warning | tail -n 4
NBK_ASV_WORK=/tmp/nbk-asv benchmarks_asv/run.sh --budget "${BUDGET:-360}" --out "$out" main
