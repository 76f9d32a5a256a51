#!/usr/bin/env bash
# Session 17, run C (device tool, carry .whl): the split-tail GPU tests again, after run B's
# one failure (a case whose K of 100 halves gave a's rows 200 bytes: not TMA-loadable, a bad
# case; now K = 120).
. tools/device-preamble.sh
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py -k streamk 2>&1 | tail -n 4
echo "done at ${SECONDS}s"
