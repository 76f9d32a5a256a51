#!/usr/bin/env bash
# Session 29, run G (device tool, carry .whl): the row benchmark on this session's
# final rows (float32 layer_norm's pairs at 128 threads, the row ops' replay before their
# stream frame), after one warm-up process per op and dtype fills the disk cache.
. tools/device-preamble.sh
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid
timeout ${BENCH_S:-420} python3 -m nbkernels.rows.bench --dtypes bf16,f32 \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
echo "bench done at ${SECONDS}s"
