#!/usr/bin/env bash
# Session 29, run D (device tool, carry .whl; perf-notes r23): rms_norm built as shipped and
# under a 64-register cap (launch bounds (256, 4), a cache key of its own), bf16 and float32 at
# the sizes, alternated twice; the automatic plan follows each build's registers.
. tools/device-preamble.sh
for round in 1 2; do
    for cap in none 64; do
        timeout 150 python3 tools/rows_regcap.py gpu --cap $cap --ops rms_norm \
            --dtypes bf16,f32 2>&1 | grep "of copy"
    done
done
echo "done at ${SECONDS}s"
