# Session 50, run B (perf-notes r55): this tree's row GPU tests (the whole file, while both trees
# compile), then the session's start (old) against this tree (new: narrow builds on warps and on
# 64-thread blocks), two rounds, the four norm ops at rows of 1100-2048; compute-sanitizer on the
# narrow rows' cases; the issue's benchmark (torch and CuPy peers) at rows of 768 and 1536.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 65536x1536,81920x1280,98304x1100,49152x2048"
export AB_TREES="old:_ab/old new:."
OPS=layer_norm,softmax,rms_norm,rms_norm_residual
ab_trees_around $OPS 240 220 t_rows.txt -n 15 tests/test_rows_gpu.py
row_sanitizer narrow
timeout 110 python3 -m nbkernels.rows.bench --ops $OPS --dtypes bf16 --sizes 131072x768,65536x1536 \
    --json "$out/bench_narrow.json" 2>&1 | grep -v Warning | tail -30
echo "all done at ${SECONDS}s"
