# Session 50, run C (perf-notes r56): the row GPU tests run B did not reach or whose build the
# r56 rule changed (tools/s50b_passed.txt lists the rest, skipped), while three trees compile:
# the session's start (old), run B's rule (b: _ab/b, this tree with narrow_per_thread's least
# cover), this tree (new: no warp split between full and masked threads); two rounds at rows of
# 1100, 1000 and 1536; compute-sanitizer on the narrow rows' cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 98304x1100,98304x1000,65536x1536"
export AB_TREES="old:_ab/old b:_ab/b new:."
OPS=layer_norm,softmax,rms_norm,rms_norm_residual
NBK_SKIP_LISTED=tools/s50b_passed.txt ab_trees_around $OPS 230 210 t_rows.txt -n 15 \
    -p tools.pytest_skip_listed tests/test_rows_gpu.py
row_sanitizer narrow
echo "all done at ${SECONDS}s"
