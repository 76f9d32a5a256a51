#!/usr/bin/env bash
# Session 8, run 6: the reduction row kernels under every loop layout on the current code
# (a block per row "0", rings of 1, 2, 4), bf16 and f32 (perf-notes r10: neither a deeper ring
# in session 5 nor register caps in run 3 moved them; the layouts were last compared before
# session 6's timing fix).
. tools/device-preamble.sh  # environment, log, GPU
timeout 500 python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm,softmax \
    --dtypes bf16,f32 --modes auto,0,1,2,4 --json "$out/rows_modes.json" 2>&1 | grep -v Warning
echo "done at ${SECONDS}s"
