#!/usr/bin/env bash
# Session 20, run I (device tool, carry .whl): the deferred-stores experiment on the final tree
# at the shapes whose dispatch keeps the default tile (its patch does not cover the split
# tail that 4096x11008x4096 takes), against the tile as shipped, alternated twice.
. tools/device-preamble.sh
for round in 1 2; do
    for v in full defer; do
        if [ $v = full ]; then cmd="tools/epilogue_knockout.py full"; else cmd="tools/epilogue_defer.py"; fi
        timeout 120 python3 $cmd --dtypes bfloat16,float16 --no-triton --no-sm80 \
            --shapes 8192x8192x1024,4096x4096x4096,2048x2048x2048 2>&1 | grep -E "cublas=" \
            | cut -c1-100 | sed "s/^/$v$round /"
        echo "$v $round at ${SECONDS}s"
    done
done
