#!/usr/bin/env bash
# Session 34, run C (one GPU; carry .whl and _ab, _ab/old = 11907d7): DLPack-only arrays
# (tests/test_dlpack.py, with JAX beside it if the machine has it), then the host pieces of a
# small call on this tree and the small calls of the old tree against this one (perf-notes h7:
# where the torch replay's extra time goes).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
gpu_tests 240 200 dl.txt -n 3 tests/test_dlpack.py
python3 -c "import jax; print('jax', jax.__version__)" 2>&1 | tail -n 1
timeout 120 python3 tools/host_parts.py 2>&1 | grep -E "torch|getDevice|cuCtxGetDevice|empty launch|rms_norm" | head -30
ab_small_calls 150
