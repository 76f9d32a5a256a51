#!/usr/bin/env bash
# Session 34, run D (two GPUs): JAX arrays through DLPack (every dtype now, the array
# interface's included), the DLPack tests, the two-GPU tests and the torch replays after the
# torch device check moved to torch's own query; the host pieces of that check.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 200 python3 tools/jax_probe.py 2>&1 | grep -v Warning | tail -12
gpu_tests 200 170 t1.txt -n 8 tests/test_dlpack.py tests/test_multi_gpu.py tests/test_devices.py
gpu_tests 200 170 t2.txt -n 8 tests/test_rows_gpu.py tests/test_gemm_gpu.py -k torch
timeout 100 python3 tools/host_parts.py 2>&1 | grep -E "torch|getDevice|cuCtxGetDevice|empty launch" | head
