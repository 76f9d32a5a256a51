#!/usr/bin/env bash
# Session 34, run E (kind nvidia-h100-x1, carry .whl): issue #3's sm80-class speed on today's
# code, where session 27 left f16 at 8192^3 on an H100 at 382-406 TFLOPS against the 390 asked:
# sm80 forced, the default tile, bf16 and f16 at 4096^3 and 8192^3, three processes, cuBLAS and
# the mma.sync ceiling in each; then the small calls once.
. tools/device-preamble.sh
args=(--variant sm80 --dtypes bf16,f16 --sizes 4096,8192)
timeout 200 python3 -m nbkernels.matmul.bench "${args[@]}" --prewarm 4 --prewarm-only 2>&1 | tail -n 1
for r in 1 2 3; do
    timeout 150 python3 -m nbkernels.matmul.bench "${args[@]}" --json "$out/r$r.json" > "$out/r$r.txt" 2>&1
    echo "round $r rc=$? at ${SECONDS}s"
done
python3 -m nbkernels.matmul.bench --summary "$out"/r1.json "$out"/r2.json "$out"/r3.json
timeout 90 python3 tools/host_parts.py --calls 2>&1 | grep -v "^ *$" | head -12
