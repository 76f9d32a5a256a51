#!/usr/bin/env bash
# Planned for the session after 36 (device tool, carry .whl and _ab): the GPU tests of
# session 36 that did not run (a numba result bound to its call's stream=, 59316fa; the DLPack
# exchange with stream= current, 49d850a; a read-only NumPy out refused before the work), on
# this tree and, as their negative control, on the package from before those changes (each
# must fail there). Make _ab/old first:
#   mkdir -p _ab/old && git archive a12f029 | tar -x -C _ab/old &&
#   cp tests/test_array_streams_gpu.py tests/test_dlpack.py tests/test_rows_gpu.py _ab/old/tests/
# (the new test files run inside the old tree, so that they import its package).
. tools/device-preamble.sh
. tools/device-pytest.sh
T="tests/test_array_streams_gpu.py tests/test_dlpack.py tests/test_rows_gpu.py"
K="bound_to_the_given_stream or read_after_its_producers_work or read_only_numpy_out"
for round in 1 2; do
    gpu_tests 200 180 new$round.txt -n 3 $T -k "$K"
    (cd _ab/old && PYTHONPATH=/tmp/site:$PWD NBKERNELS_CACHE_DIR=$PWD/.nbk_cache timeout 200 \
        python3 -m pytest -q -p no:cacheprovider -n 3 $T -k "$K" > "$out/old$round.txt" 2>&1)
    echo "old tree (each must fail): $(grep -E '[0-9]+ (passed|failed)' "$out/old$round.txt" | tail -n 1)"
done
# the whole producer-stream file and the DLPack GPU tests
gpu_tests 300 280 all.txt -n 4 tests/test_array_streams_gpu.py tests/test_dlpack.py
