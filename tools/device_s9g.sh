#!/usr/bin/env bash
# Session 9, run 7: after run 6 (the row kernels with fewer instructions a row): every layout of
# layer_norm bf16 on this tree (it lost 6 points at 8192^2 with the ring of 2), then the f32
# reductions on the tree before (ab_old/, as in run 6) and on this one, which run 6's 85 s
# rounds cut short; then, if time is left, the f64 default against 3 stages (run 5: +1.5%).
. tools/device-preamble.sh  # environment, log, GPU
timeout 170 python3 -m nbkernels.rows.bench --ops layer_norm --dtypes bf16 \
    --modes auto,0,1,2,4 --json "$out/ln_modes.json" 2>&1 | grep -v Warning
echo "layouts done at ${SECONDS}s"
BENCH="python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm,softmax --dtypes f32"
(cd ab_old && PYTHONPATH=$PWD:$PYTHONPATH timeout 140 $BENCH --json "$out/f32_old.json" 2>&1 \
    | grep -v Warning)
timeout 140 $BENCH --json "$out/f32_new.json" 2>&1 | grep -v Warning
echo "f32 done at ${SECONDS}s"
if [ "$SECONDS" -lt 420 ]; then
    T="default;128,64,128,2,2,3,min_blocks=2;default;128,64,128,2,2,3,min_blocks=2"
    timeout $((560 - SECONDS)) python3 -m nbkernels.matmul.bench --dtypes f64 \
        --sizes 2048,4096,8192 --tiles "$T" --json "$out/f64_stages.json" 2>&1 | tail -n 12
fi
echo "done at ${SECONDS}s"
