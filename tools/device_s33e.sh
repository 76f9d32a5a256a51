#!/usr/bin/env bash
# Session 33, run E (warm, after run D): the rest of the sm90a GPU file on the by-value maps,
# the guarded-store and offloaded-store sweeps (runs A and B ran the other 348 tests), their
# tiles built first in parallel processes for as long as 200 s.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs \
128x256x4g,128x128x6g,256x128x4g,256x128x4wg,64x128x4g,128x128x6pg,64x256x5pg,128x256x4gd2,\
128x256x3o,128x128x4o,256x128x3o,256x128x3wo,64x128x4o 2>&1 | tail -n 2
gpu_tests $((540 - SECONDS)) 250 t_e.txt -n 16 tests/test_gemm_sm90a_gpu.py -k "guarded or offloaded"
