#!/usr/bin/env bash
# Planned first run of session 42 (H200; carry .whl): the 32-bit tile walk (d17f141, perf-notes
# s26-s27) at the key shapes session 41 did not time, and the sm90a edge shapes and
# deferred stores under compute-sanitizer on it (session 41 ran the split tail only).
#  1. the bench at 8192^3, 4096x11008x4096 and 4096^3, f16 and bf16, two processes, cuBLAS in
#     each (compiled in the background while the sanitizer runs);
#  2. tools/sanitize_gemm.py sm90a and tools/sanitize_defer.py under memcheck and racecheck.
. tools/device-preamble.sh
. tools/ab-lib.sh
. tools/device-pytest.sh
SIZES=8192,4096x11008x4096,4096
ab_warm "$PWD" --dtypes f16,bf16 --sizes $SIZES & pid=$!
sanitizers 150 "tools/sanitize_gemm.py sm90a" tools/sanitize_defer.py
wait $pid
echo "warm at ${SECONDS}s"
for round in 1 2; do
    ab_bench "new_$round" "$PWD" --dtypes f16,bf16 --sizes $SIZES --reps 20
done
echo "done at ${SECONDS}s"
