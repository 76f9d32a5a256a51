#!/usr/bin/env bash
# Session 19, run A (device tool, carry .whl): the epilogue's share of the sm90a GEMM's time.
# tools/epilogue_knockout.py times the default tile as shipped ("full"), with its staged tile
# written to shared memory but not stored ("stage"), and with no epilogue ("none"), each in
# its own process against cuBLAS (perf-notes s15). The cut-down builds compute wrong results.
. tools/device-preamble.sh
for v in full stage none; do
    timeout 170 python3 tools/epilogue_knockout.py $v --dtypes bfloat16 --no-triton --no-sm80 \
        --json "${OUT:-/tmp}/knockout_$v.json" 2>&1 | grep -v "^ *$" | tail -n 8
    echo "$v done at ${SECONDS}s"
done
