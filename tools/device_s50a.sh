# Session 50, run A (perf-notes r54): this tree's row GPU tests (the whole file, while both trees
# compile), then the tree of the session's start (old, 37006ec) against this one (new: narrow rows
# on builds of the slot groups they need), two rounds, the four norm ops at narrow widths and
# 8192^2 (unchanged builds); then compute-sanitizer on the narrow rows' cases.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f32 AB_ROWS_ARGS="--sizes 131072x768,98304x1024,196608x512,65536x1536,8192x8192"
export AB_TREES="old:_ab/old new:."
OPS=layer_norm,softmax,rms_norm,rms_norm_residual
ab_trees_around $OPS 250 230 t_rows.txt -n 14 tests/test_rows_gpu.py
row_sanitizer narrow
echo "all done at ${SECONDS}s"
