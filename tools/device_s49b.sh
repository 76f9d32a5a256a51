# Session 49, run B (perf-notes r50): register rows of 8192 (and 6144) on the 32-element build,
# 256 (192) threads. eeafbd0 (old) against eeafbd0 with regs_config preferring 32 elements on
# a tie (p32); 16-bit layer_norm, softmax and rms_norm, two rounds.
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,16384x8192,16384x6144"
export AB_TREES="old:_ab/old p32:_ab/p32"
ROUNDS=2 ab_trees layer_norm,softmax,rms_norm
echo "all done at ${SECONDS}s"
