#!/usr/bin/env bash
# Session 20, run D (device tool, carry .whl): per-SASS warp samples of the default tile as
# shipped (this tree: evict-first stores) and of the "stage" knock-out, at short K, to see
# whether what the knock-out saves is in the epilogue or in the next tile's main loop
# (perf-notes s16). Source pages (gzipped CSV) to $OUT.
. tools/device-preamble.sh
shape=${1:-8192x8192x1024}
for v in full stage; do
    timeout 200 ncu --profile-from-start off --import-source no --section SourceCounters \
        --section WarpStateStats --section SpeedOfLight -o "/tmp/ko_$v" \
        python3 tools/epilogue_knockout.py $v --profile $shape > /tmp/ncu_$v.txt 2>&1
    echo "ncu $v rc=$? at ${SECONDS}s"
    timeout 90 ncu -i "/tmp/ko_$v.ncu-rep" --page source --csv --print-source sass 2>&1 \
        | gzip > "$out/src_$v.csv.gz"
    timeout 60 ncu -i "/tmp/ko_$v.ncu-rep" --page details --print-summary none 2>&1 \
        | grep -E "^  [a-zA-Z_]|Duration" | cut -c1-90
    rm -f "/tmp/ko_$v.ncu-rep"
done
echo "done at ${SECONDS}s"
