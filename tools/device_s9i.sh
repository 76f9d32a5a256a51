#!/usr/bin/env bash
# Session 9, run 9: rms_norm + residual and swiglu (bf16, f32) before (ab_old/: git archive
# 4f6dba7) and after the r12 instruction cuts, which runs 6-7 did not time: one round each.
. tools/device-preamble.sh  # environment, log, GPU
BENCH="python3 -m nbkernels.rows.bench --ops rms_norm_residual,swiglu --dtypes bf16,f32"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 200 $BENCH --json "$out/old.json" 2>&1 \
    | grep -E "of copy|copy bandwidth")
timeout 200 $BENCH --json "$out/new.json" 2>&1 | grep -E "of copy|copy bandwidth"
echo "done at ${SECONDS}s"
