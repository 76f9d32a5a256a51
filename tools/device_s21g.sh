#!/usr/bin/env bash
# Session 21, run G (device tool, carry .whl): ncu's full set on one launch of the default tile
# (deferred stores, e2) and, in a second process, of the same tile without them (128x256x4) at
# 8192x8192x1024 bf16 (perf-notes s18: where the deferred build's time goes); details pages and
# per-SASS source counters (gzipped CSV) to $OUT.
. tools/device-preamble.sh
shape=${1:-8192x8192x1024}
for v in 0 1; do
    timeout 240 ncu --profile-from-start off --set full --import-source no --launch-skip $v \
        --launch-count 1 -o "$out/g$v" python3 tools/profile_ncu.py gemm $shape 128x256x4 \
        > "$out/ncu$v.txt" 2>&1
    echo "ncu $v rc=$? at ${SECONDS}s"
    tail -n 2 "$out/ncu$v.txt"
    timeout 60 ncu -i "$out/g$v.ncu-rep" --page details --print-summary none > "$out/details$v.txt" 2>&1
    timeout 90 ncu -i "$out/g$v.ncu-rep" --page source --csv --print-source sass 2>&1 \
        | gzip > "$out/src$v.csv.gz"
    rm -f "$out/g$v.ncu-rep"
    grep -E "Duration|DRAM Throughput|L2 Hit Rate |Registers Per" "$out/details$v.txt" | cut -c1-110
done
echo "done at ${SECONDS}s"
