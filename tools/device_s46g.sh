#!/usr/bin/env bash
# Session 46, run G (H200; carry .whl; perf-notes r41): layer_norm's weight and bias read
# through L1 (NBKERNELS_LN_GLOBAL_VECTORS=1) against staged, each with the automatic plan and
# with a block per row (NBKERNELS_ROWS_LOOP=0), alternated twice; the layer_norm GPU tests
# with the L1 vectors first.
. tools/device-preamble.sh
. tools/device-pytest.sh
NBKERNELS_LN_GLOBAL_VECTORS=1 gpu_tests 200 190 t_ln_gv.txt -n 12 tests/test_rows_gpu.py -k layer_norm
for round in 1 2; do
    for spec in "staged auto:0:" "L1 auto:1:" "staged block:0:0" "L1 block:1:0"; do
        IFS=: read -r label gv loop <<< "$spec"
        echo "--- round $round: $label"
        NBKERNELS_LN_GLOBAL_VECTORS=$gv NBKERNELS_ROWS_LOOP=$loop timeout 100 \
            python3 tools/rows_ab_quick.py --ops layer_norm --dtypes bf16,f16,f32 2>&1 \
            | grep "% of copy"
    done
done
echo "done at ${SECONDS}s"
