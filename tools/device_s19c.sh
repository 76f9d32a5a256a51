#!/usr/bin/env bash
# Session 19, run C (device tool, carry .whl and ab_old = git archive 8deac93 nbkernels): the
# map cache's per-geometry encoder and the map store's non-blocking copies. GPU tests of the
# maps (driver encoding, the store not waiting for queued work, repeat calls on new arrays,
# past the store's bound), then tools/map_costs.py on this tree and on session 18's.
. tools/device-preamble.sh
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_hopper_gpu.py -k "tensor_map or map_store_entry" 2>&1 | tail -n 2
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gemm_sm90a_gpu.py -k "repeat or map_store or torch" 2>&1 | tail -n 2
echo "tests at ${SECONDS}s"
timeout 100 python3 tools/map_costs.py 2>&1 | tail -n 7
echo "this tree at ${SECONDS}s; session 18's (8deac93):"
PYTHONPATH=/tmp/site:$PWD/ab_old timeout 100 python3 tools/map_costs.py 2>&1 | tail -n 7
echo "done at ${SECONDS}s"
