#!/usr/bin/env bash
# Session 29, run B (device tool, carry .whl; perf-notes r21, an experiment, run on 7bf9d36: its
# --dynamic flag and rows.device.DYNAMIC were reverted after the run): the row loops
# with rows from a counter (--dynamic, kernels cached beside the shipped ones; every layout's
# output checked on sampled rows), bf16 rms_norm, layer_norm and softmax and float32
# layer_norm at the sizes: the automatic plan, a block per row, loops of 1 and 2
# buffers x 2-8 blocks an SM (4 buffers keep the fixed walk).
. tools/device-preamble.sh
for case in layer_norm:bf16 rms_norm:bf16 softmax:bf16 layer_norm:f32; do
    echo "--- ${case} dynamic"
    timeout 200 python3 tools/rows_layout_sweep.py --dynamic --ops ${case%:*} \
        --dtypes ${case#*:} --per-sm 2,3,4,6,8 --json "$out/dyn_${case/:/_}.json" 2>&1 \
        | grep -v "^ *$" | tail -n 5
done
echo "done at ${SECONDS}s"
