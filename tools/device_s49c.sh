# Session 49, run C (perf-notes r51): four trees, two rounds, 16-bit layer_norm, softmax and
# rms_norm: eeafbd0 (old), p32 (regs_config prefers 32 elements a thread on a tie), p32u (p32,
# the 32-element layer_norm rows held as float32), p32x (p32, rms_norm's rows of 8192 and rows
# of 2049-4096 in registers).
. tools/device-preamble.sh
. tools/ab-lib.sh
export DTYPES=bf16,f16 AB_ROWS_ARGS="--sizes 8192x8192,32768x4096,16384x8192,16384x7168,16384x5120"
export AB_TREES="old:_ab/old p32:_ab/p32 p32u:_ab/p32u p32x:_ab/p32x"
ROUNDS=2 ab_trees layer_norm,softmax,rms_norm
echo "all done at ${SECONDS}s"
