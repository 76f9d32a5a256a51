#!/usr/bin/env bash
# Session 30, run F (device tool, carry .whl): the 16-bit rms_norm builds as sm_80 and sm_86
# code JIT-compiled by the driver on this GPU (`nbkernels validate --as`, the wide build's
# RowCase among them), and the validate GPU tests.
. tools/device-preamble.sh
. tools/device-pytest.sh
for t in sm_80 sm_86; do
    timeout 240 python3 -m nbkernels validate --as $t --only 'rows/rms_norm*' 2>&1 \
        | grep -v Warning | tail -n 12
done
gpu_tests 200 180 t_validate.txt tests/test_validate.py
echo "done at ${SECONDS}s"
