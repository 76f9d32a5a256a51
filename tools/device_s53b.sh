# Session 53, run B (perf-notes r65): layer_norm's lanes layout with the output groups worked
# on in a copy (the 32-element builds at 64 registers instead of 119) and its new rule (16-bit
# rows up to 768, float32 up to 1,024 on 16 lanes of 4); its GPU tests, then memcheck on its
# lanes cases (racecheck: the lanes kernels use no shared memory).
. tools/device-preamble.sh
. tools/ab-lib.sh
VAR=staged,auto,lanes8/128,lanes16/128,lanes32/128,torch
(PYTHONPATH=/tmp/site:$PWD timeout 200 python3 tools/softmax_lanes_ab.py --ops layer_norm \
    --dtypes bf16,f16,f32 --sizes 64x200,64x768,64x1024 --variants $VAR --reps 2 > /dev/null 2>&1) &
warm=$!
gpu_tests 230 200 t_ln.txt -n 14 tests/test_rows_gpu.py -k "layer_norm and (lanes or 200 or 768 or 1024 or 129 or 197 or 100 or misaligned)"
wait $warm
echo "warm done at ${SECONDS}s"
(timeout 100 python3 tools/softmax_lanes_ab.py --ops layer_norm --dtypes bf16,f16,f32 \
    --sizes 262144x200,65536x768,65536x1024 --variants $VAR --json "$out/ln_b.json" 2>&1 | grep -v Warning)
SANITIZER_EXTRA="" 
timeout 160 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 \
    python3 tools/sanitize_rows.py lanes:layer_norm 2>&1 | grep -v Warning | tail -n 3
echo "memcheck rc=$? at ${SECONDS}s"
echo "all done at ${SECONDS}s"
