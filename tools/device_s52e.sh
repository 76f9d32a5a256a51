# Session 52, run E (perf-notes r63): the replay tests of run D's table at rows of 200 and 197
# again (run D's two failures: swiglu's packed halves given an odd width by the new table rows,
# now skipped), then rows.bench on float16 softmax at the short rows (its first timing: runs
# B-D timed bf16 and float32).
. tools/device-preamble.sh
. tools/ab-lib.sh
gpu_tests 200 180 t_replay.txt -n 15 tests/test_rows_gpu.py -k "replay_with_new_data"
timeout 100 python3 -m nbkernels.rows.bench --ops softmax --dtypes f16 \
    --sizes 262144x197,262144x200,131072x500,65536x1000 \
    --json "$out/rows_bench_s52e_f16.json" 2>&1 | grep -v Warning | tail -7
echo "all done at ${SECONDS}s"
