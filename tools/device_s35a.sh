#!/usr/bin/env bash
# Session 35, run A: today's code on a GPU. The whole row GPU file (not run in full in session
# 34) and the float64 GPU file (its kernel's MMA group now picked through
# arch.target_satisfies), each in one pytest run.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 330 300 rows.txt -n 12 tests/test_rows_gpu.py
gpu_tests 230 200 f64.txt -n 12 tests/test_gemm_f64_gpu.py
