#!/usr/bin/env bash
# Session 29, run H (device tool, carry .whl; perf-notes r24, measurement only): bf16
# layer_norm in blocks of 2, 4 and 8 rows with one buffer (and 2 and 4 rows with two) against
# its automatic plan and a block per row, at the sizes, in two processes.
. tools/device-preamble.sh
for i in 1 2; do
    timeout 200 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes bf16 --loops no \
        --rows-per-block yes --block-rows 2x1,4x1,8x1,2x2,4x2 --json "$out/h$i.json" 2>&1 \
        | grep -v "^ *$" | tail -n 4
done
echo "done at ${SECONDS}s"
