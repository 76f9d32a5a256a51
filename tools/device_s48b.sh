# Session 48, run B (perf-notes r47, second step): the loop tables looked up by the power of two
# a block of whole warps rounds up to (config.by_block_size), and layer_norm's warps that hold
# whole threads meeting without division. The row GPU tests of layer_norm and of the new
# widths, compute-sanitizer on the blocks of whole warps, then against run A's tree 79653e0
# (_ab/old, running this tree's rows_ab_quick): every op in bf16 and f32, two rounds, at rows
# of 5120, 7168 and 5000; each loop mode (NBKERNELS_ROWS_LOOP 0, 1, 2, pairs) on this tree at
# those widths; layer_norm at the two sizes, one round (its SASS changed for every
# width).
. tools/device-preamble.sh
. tools/device-pytest.sh
. tools/ab-lib.sh
cp tools/rows_ab_quick.py _ab/old/tools/
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 16384x5120,16384x7168,16384x5000"
OPS=rms_norm,rms_norm_residual,layer_norm,softmax,swiglu
ab_rows_warm $OPS
gpu_tests 240 230 t_rows.txt -n 12 tests/test_rows_gpu.py -k "layer_norm or layout_follows or 5120 or 7168 or 3072 or 5000 or block96"
ab_rows_warm_wait
row_sanitizer warps
ROUNDS=2 ab_rows_rounds $OPS
for mode in 0 1 2 pairs; do
    echo "--- NBKERNELS_ROWS_LOOP=$mode (this tree)"
    NBKERNELS_ROWS_LOOP=$mode timeout 120 python3 tools/rows_ab_quick.py --ops $OPS --dtypes f32,bf16 \
        $AB_ROWS_ARGS --json "$out/mode_$mode.json" 2>&1 | grep -v Warning | grep -v '^copy' \
        | grep -v "None regs"
done
mkdir -p "$out/ctl" && out=$out/ctl
AB_ROWS_ARGS= ROUNDS=1 ab_rows_rounds layer_norm
echo "done at ${SECONDS}s"
