# Session 48, run C (perf-notes r47, the session's row layouts): the whole row GPU file;
# every op in bf16 and f32 against the session's starting tree 3f6e5c0 (_ab/old, running this
# tree's rows_ab_quick), two rounds, at the two sizes and rows of 5120, 7168 and 5000;
# then softmax f32 and rms_norm + residual in each loop mode at rows of 8192 (the sizes their
# table entries were measured at), this tree.
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,16384x5120,16384x7168,16384x5000"
OPS=rms_norm,rms_norm_residual,layer_norm,softmax,swiglu
ab_rows_warm $OPS
gpu_tests 290 280 t_rows.txt -n 14 tests/test_rows_gpu.py
ab_rows_warm_wait
ROUNDS=2 ab_rows_rounds $OPS
for mode in 0 1 2 pairs; do
    echo "--- NBKERNELS_ROWS_LOOP=$mode (this tree)"
    NBKERNELS_ROWS_LOOP=$mode timeout 60 python3 tools/rows_ab_quick.py --ops softmax,rms_norm_residual \
        --dtypes f32,bf16 --sizes 8192x8192,16384x8192 --json "$out/mode_$mode.json" 2>&1 \
        | grep -v Warning | grep -v '^copy'
done
echo "done at ${SECONDS}s"
