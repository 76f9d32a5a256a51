#!/usr/bin/env bash
# Session 29, run K (device tool, carry .whl; perf-notes r25, measurement only): float32
# layer_norm at 8192^2 in blocks of 2, 4 and 8 rows with one buffer against its loop, twice.
. tools/device-preamble.sh
for i in 1 2; do
    timeout 150 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes f32 --loops no \
        --shapes 8192x8192,16384x8192 --rows-per-block yes --block-rows 2x1,4x1,8x1 \
        --json "$out/k$i.json" 2>&1 | grep -v "^ *$" | grep -v "^copy"
done
echo "done at ${SECONDS}s"
