# Session 52, run G (perf-notes r64): layer_norm's lanes layout against its staged layouts,
# fixed lane counts and torch eager; its GPU tests (lanes cases and the automatic choice at
# short rows); compute-sanitizer on the lanes cases (layer_norm's two among them).
. tools/device-preamble.sh
. tools/ab-lib.sh
(cd tools && timeout 100 python3 softmax_lanes_ab.py --ops layer_norm --dtypes bf16,f32 \
    --sizes 262144x200,65536x768,65536x1024 --json "$out/lanes_s52g.json" 2>&1 | grep -v Warning)
gpu_tests 100 90 t_rows.txt -n 15 tests/test_rows_gpu.py -k "layer_norm and (lanes or 200 or 768 or 1024 or 129 or 197 or 100 or misaligned)"
sanitizers 45 "tools/sanitize_rows.py lanes"
echo "all done at ${SECONDS}s"
