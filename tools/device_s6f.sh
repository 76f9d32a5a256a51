#!/usr/bin/env bash
# Session 6, run 6 (device tool, carry .whl): the sm90a GPU test file with the staged epilogue
# opt-in (default off: the guarded stores of session 5), after runs 2, 4 and 5 stopped with
# staged kernels built.
. tools/device-preamble.sh  # environment, log, GPU
timeout 540 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py \
    > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(tail -n 1 "$out/t_sm90a.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_sm90a.txt" | head -8
echo "done at ${SECONDS}s"
