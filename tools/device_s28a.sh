#!/usr/bin/env bash
# Session 28, run A (device tool, carry .whl): the sm80-class 16-bit kernel with 128x256 tiles
# (one block of 8 warps an SM) against WIDE_K (two blocks of 4 warps), sm80 forced, every tile
# in the same process, three processes. Question: does a tile with 25% less L2-to-SM traffic
# and half the barriers per flop hold f16 at 8192^3 above 390 TFLOPS (perf-notes v10)?
. tools/device-preamble.sh
. tools/ab-lib.sh
tiles="default;128,256,128,2,4,2;128,256,128,2,4,3;256,128,128,4,2,3"
args=(--variant sm80 --dtypes bf16,f16 --sizes 4096,8192 --tiles "$tiles")
timeout 400 python3 -m nbkernels.matmul.bench "${args[@]}" --prewarm 8 --prewarm-only 2>&1 | tail -n 1
for r in 1 2 3; do
    timeout 240 python3 -m nbkernels.matmul.bench "${args[@]}" --json "$out/r$r.json" > "$out/r$r.txt" 2>&1
    echo "round $r rc=$? at ${SECONDS}s"
done
python3 -m nbkernels.matmul.bench --summary "$out"/r1.json "$out"/r2.json "$out"/r3.json
