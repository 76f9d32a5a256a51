#!/usr/bin/env bash
# Session 33, run F (an H100, fresh machine, little device time left): the by-value tensor
# maps' own GPU tests (repeat calls on new arrays, 300 pairs on a non-blocking stream, the
# captured CUDA graph, torch on a side stream) and the default tile's fused epilogues.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests $((250 - SECONDS)) 200 t_f.txt -n 8 tests/test_gemm_sm90a_gpu.py -k "repeat or \
map_cache or captured or torch or fused_bias_gelu"
