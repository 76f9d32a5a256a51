#!/usr/bin/env bash
# Session 44, run G (device tool, carry .whl; measurement only): rms_norm beside a float32
# weight, next to the layer_norm columns of tools/ln_vectors_cost.py (does the one-copy-a-
# group staging cost rms_norm's mixed-precision form too, as it cost layer_norm's?).
. tools/device-preamble.sh
. tools/ab-lib.sh
lnv_warm .
wait $lnv_pids  # not a bare wait: it would wait for the log's tee too
echo "warm-up done at ${SECONDS}s"
lnv_in . 200 --dtypes bf16,f16 --rounds 2 > "$out/g.txt" 2>&1
grep "round 1 .*rms\|round 1 .*ln f32" "$out/g.txt"; grep summary -A30 "$out/g.txt"
echo "done at ${SECONDS}s"
