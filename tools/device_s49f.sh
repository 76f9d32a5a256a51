# Session 49, run F: the 3 layer_norm GPU tests run E's limit stopped (the 309 it passed
# deselected), then the row benchmark with the torch and CuPy peers, bf16 and f16, at
# 8192^2 and 32768x4096 (this tree, 8c237d0's package).
. tools/device-preamble.sh
. tools/device-pytest.sh
NBK_SKIP_LISTED=tools/s49e_passed.txt gpu_tests 120 110 t_ln2.txt -n 3 -p tools.pytest_skip_listed \
    tests/test_rows_gpu.py -k layer_norm
timeout 280 python3 -m nbkernels.rows.bench --dtypes bf16,f16 --sizes 8192x8192,32768x4096 \
    --json "$out/rows_bench_h200_s49.json" 2>&1 | grep -v Warning
echo "all done at ${SECONDS}s"
