# Session 51, run E: the row GPU tests of the other ops and the streams file on this tree
# (host.Call's rows/output/unshift and run_phases changed for softmax's shifted and split
# kernels; the other ops' paths must be as before), softmax's having run in runs A-C.
. tools/device-preamble.sh
. tools/ab-lib.sh
gpu_tests 560 300 t_rows_other.txt -n 15 tests/test_rows_gpu.py tests/test_array_streams_gpu.py \
    -k "not softmax"
echo "all done at ${SECONDS}s"
