# Written in session 47, not yet run: what that session could not run on a GPU (its device time
# was spent). The row GPU file's repeat calls at the widths the register rows take (their
# replays, results checked), then the row benchmark on this tree, 16-bit, in one process
# (torch and CuPy peers beside it; docs/rows.md's torch ratios are session 46's).
. tools/device-preamble.sh
. tools/device-pytest.sh
gpu_tests 300 280 t_repeat.txt -n 8 tests/test_rows_gpu.py -k "repeat or replay or layout_follows"
timeout 400 python3 -m nbkernels.rows.bench --dtypes bf16,f16 --json "$out/rows_bench_h200_s48.json"
echo "done at ${SECONDS}s"
