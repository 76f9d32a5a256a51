#!/usr/bin/env bash
# Session 6, run 2 (device tool, carry .whl): the whole sm90a GPU test file on the staged
# epilogue (run 1 gave it 240 s, too little for the builds), then the host time of a repeat
# sm90a call on torch tensors (run 1 reported 64-187 us).
. tools/device-preamble.sh  # environment, log, GPU
timeout 150 python3 tools/host_sm90a.py > "$out/host.txt" 2>&1
head -n 40 "$out/host.txt"
timeout 420 python3 -m pytest -q -p no:cacheprovider --durations=5 tests/test_gemm_sm90a_gpu.py \
    > "$out/t_sm90a.txt" 2>&1
echo "sm90a tests rc=$?: $(tail -n 1 "$out/t_sm90a.txt")"
grep -E "^(FAILED|ERROR)|slowest|s (call|setup)" "$out/t_sm90a.txt" | head -14
echo "done at ${SECONDS}s"
