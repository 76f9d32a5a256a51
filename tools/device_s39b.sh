#!/usr/bin/env bash
# Planned second run of the session after 38 (H200 or H100; carry .whl): the sm90a GPU file
# whole on the committed uniform A descriptor (session 38 ran it three times in part, 163
# cases passed, none failed, never to its end: its random sweeps compile a configuration a
# case). One call, nothing beside it; prewarmed by the file's first pass over its cases.
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 560 550 t_sm90a.txt -n 16 tests/test_gemm_sm90a_gpu.py tests/test_hopper_gpu.py
echo "done at ${SECONDS}s"
