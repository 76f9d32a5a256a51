#!/usr/bin/env bash
# Session 44, run H (device tool, carry .whl; measurement only): rms_norm beside a float32
# weight (run G: 78.6 / 70.6% of copy at 8192^2 bf16 / f16 against 89.9 with a 16-bit weight),
# its automatic plan (a block per row) against blocks looping over the rows
# (tools/rms_f32_loop.py), one process per dtype.
. tools/device-preamble.sh
timeout 150 python3 tools/rms_f32_loop.py --dtypes bf16 > "$out/bf16.txt" 2>&1 &
p1=$!
timeout 150 python3 tools/rms_f32_loop.py --dtypes f16 > "$out/f16.txt" 2>&1 &
p2=$!
wait $p1 $p2
grep "of copy" "$out"/bf16.txt "$out"/f16.txt | sed 's|.*/||'
echo "done at ${SECONDS}s"
