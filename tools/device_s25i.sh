#!/usr/bin/env bash
# Session 25, run I2 (device tool, carry .whl; H100 or H200): 16-bit layer_norm with 64
# elements a thread (today) against 32 (an experiment: --ln-row-bytes 64, its own disk
# cache), each in the automatic plan, a block per row and blocks of 2 or 4 rows.
. tools/device-preamble.sh
for rb in 128 64; do
    timeout 250 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes bf16 --loops no \
        --rows-per-block yes --ln-row-bytes $rb --shapes ${SHAPES:-32768x2048,32768x4096,8192x8192} \
        --json "$out/ln_$rb.json" 2>&1 | grep -v Warning
    echo "row bytes $rb done at ${SECONDS}s"
done
