#!/usr/bin/env bash
# Session 20, run E (device tool, carry .whl): the deferred-stores experiment
# (tools/epilogue_defer.py: half of each warp's chunks stored between the next tile's first
# wgmma issue and wait) against the tile as shipped, each in its own process beside cuBLAS,
# key shapes, alternated twice; then ncu's duration of one launch of each at short K.
. tools/device-preamble.sh
for round in 1 2; do
    for v in full defer; do
        if [ $v = full ]; then cmd="tools/epilogue_knockout.py full"; else cmd="tools/epilogue_defer.py"; fi
        timeout 170 python3 $cmd --dtypes bfloat16,float16 --no-triton --no-sm80 \
            --json "$out/e_${v}_$round.json" 2>&1 | grep -E "cublas=" | cut -c1-118 | sed "s/^/$v$round /"
        echo "$v $round at ${SECONDS}s"
    done
done
for v in full defer; do
    if [ $v = full ]; then cmd="tools/epilogue_knockout.py full --profile"; else cmd="tools/epilogue_defer.py --profile"; fi
    timeout 120 ncu --profile-from-start off --print-summary none \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
        python3 $cmd 8192x8192x1024 2>&1 | grep -E "^  [a-z_<]|duration|dram__|hit_rate" | cut -c1-90 | sed "s/^/$v /"
done
echo "done at ${SECONDS}s"
