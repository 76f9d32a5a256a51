#!/usr/bin/env bash
# Session 20, run A (device tool, carry .whl): where the staged epilogue's stores cost the
# sm90a GEMM its time at short K (perf-notes s16). ncu's full set on one launch of the default
# tile as shipped ("full") and without its shared read-back and global stores ("stage"), each
# in its own process beside cuBLAS, at 8192x8192x1024 bf16: details pages and the per-SASS
# source counters (gzipped CSV) to $OUT. The "stage" build computes wrong results by design.
. tools/device-preamble.sh
shape=${1:-8192x8192x1024}
for v in full stage; do
    timeout 240 ncu --profile-from-start off --set full --import-source no \
        -o "$out/ko_$v" python3 tools/epilogue_knockout.py $v --profile $shape \
        > "$out/ncu_$v.txt" 2>&1
    echo "ncu $v rc=$? at ${SECONDS}s"
    tail -n 3 "$out/ncu_$v.txt"
    timeout 60 ncu -i "$out/ko_$v.ncu-rep" --page details --print-summary none \
        > "$out/details_$v.txt" 2>&1
    timeout 90 ncu -i "$out/ko_$v.ncu-rep" --page source --csv --print-source sass 2>&1 \
        | gzip > "$out/src_$v.csv.gz"
    timeout 60 ncu -i "$out/ko_$v.ncu-rep" --page raw --csv 2>&1 | gzip > "$out/raw_$v.csv.gz"
    rm -f "$out/ko_$v.ncu-rep"
    grep -E "^  [a-zA-Z_]|Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput" \
        "$out/details_$v.txt" | cut -c1-110
done
echo "done at ${SECONDS}s"
