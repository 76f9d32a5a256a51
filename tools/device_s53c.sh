# Session 53, run C (perf-notes r65): layer_norm's final lanes rule (every kind's rows up to
# 1,024, at most 4 groups a lane: softmax's): its GPU tests, then the automatic choice timed.
. tools/device-preamble.sh
. tools/ab-lib.sh
gpu_tests 150 140 t_ln.txt -n 15 tests/test_rows_gpu.py -k "layer_norm and (lanes or 200 or 768 or 1024 or 129 or 197 or 100 or misaligned)"
(timeout 75 python3 tools/softmax_lanes_ab.py --ops layer_norm --dtypes bf16,f32 \
    --sizes 262144x200,65536x1024 --variants staged,auto,torch --json "$out/ln_c.json" 2>&1 | grep -v Warning)
echo "all done at ${SECONDS}s"
