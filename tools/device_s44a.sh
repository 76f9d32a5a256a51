#!/usr/bin/env bash
# Session 44, run A (device tool, carry .whl; measurement only, perf-notes r35): 16-bit
# layer_norm with float32 copies of its weight and bias beside today's 16-bit ones, the two
# without them and rms_norm (tools/ln_vectors_cost.py), on the H200; its kernels compiled
# first, one process per dtype.
. tools/device-preamble.sh
. tools/ab-lib.sh
lnv_warm .
wait $lnv_pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s: $(grep -c 'of copy' "$out"/warm_*.txt | tr '\n' ' ')"
lnv_in . 330 --dtypes bf16,f16 --rounds 3 2>&1 | grep -v Warning
echo "done at ${SECONDS}s"
