# Session 51, run C (perf-notes r59): softmax's main kernel lost its split phases (a kernel of
# their own now), so its aligned loop layouts are timed again against the session's start at
# the sizes and two model widths, three rounds, every dtype; meanwhile the softmax
# cases of the other GPU files and `nbkernels validate --as sm_80` on softmax (the code an
# A100 receives, JIT-compiled by the driver here; its misaligned cases take the shifted builds).
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16,f32
export AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,16384x5120,262144x200"
export AB_TREES="old:_ab/old new:."
ab_trees_warm softmax
gpu_tests 200 180 t_other.txt -n 8 tests/test_array_streams_gpu.py tests/test_dlpack.py \
    tests/test_validate.py -k "softmax or validate"
timeout 250 python3 -m nbkernels validate --as sm_80 --only 'rows/softmax/*' 2>&1 | tail -n 20
echo "validate rc=$? at ${SECONDS}s"
ab_rows_warm_wait
ROUNDS=3 ab_trees_rounds softmax
echo "all done at ${SECONDS}s"
