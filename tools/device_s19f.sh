#!/usr/bin/env bash
# Session 19, run F (device tool, carry .whl): the final tree's map paths after the review's
# mend (one error helper for both encoders): the Hopper intrinsics' GPU file (tensor maps, the
# store's non-blocking copy) and the sm90a tests of repeat calls, the map store and fused
# epilogues.
. tools/device-preamble.sh
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_hopper_gpu.py 2>&1 | tail -n 2
timeout 250 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gemm_sm90a_gpu.py -k "repeat or map_store or torch or fused" 2>&1 | tail -n 2
echo "done at ${SECONDS}s"
