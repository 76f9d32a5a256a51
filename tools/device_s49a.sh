# Session 49, run A (perf-notes r49): the register rows' L1. Three trees, two rounds each, 16-bit
# layer_norm, rms_norm and softmax at the sizes: eeafbd0 (old), x loaded L1::no_allocate
# (na), and that plus the vectors L1::evict_last (new, this checkout); then what layer_norm's
# vectors cost in the old tree and in this one (tools/ln_vectors_cost.py).
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096"
export AB_TREES="old:_ab/old na:_ab/na new:."
ROUNDS=2 ab_trees layer_norm,rms_norm,softmax
echo "--- ln_vectors_cost old"
ab_tree_run _ab/old timeout 100 python3 tools/ln_vectors_cost.py --dtypes bf16 --rounds 2 2>&1 | grep -v Warning | tail -22
echo "--- ln_vectors_cost new"
timeout 100 python3 tools/ln_vectors_cost.py --dtypes bf16 --rounds 2 2>&1 | grep -v Warning | tail -22
echo "all done at ${SECONDS}s"
