#!/usr/bin/env bash
# Session 12, run 2 (device tool, carry .whl): (1) the row repeat/stream tests that twice
# reached their last progress mark without a summary, with faulthandler dumps at the limit;
# (2) the sm80 benchmark with and without each job settling 0.3 s at its own clock before it
# is timed (perf-notes t3), two rounds each, alternated; (3) bench_hopper's key shapes,
# settled; (4) ncu on 8192x8192x1024 bf16, the sm90a default and cuBLAS: speed of light, warp
# states, per-SASS-instruction stall samples (gzipped CSV to $OUT).
. tools/device-preamble.sh  # environment, log, GPU
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80"
pids=""
timeout 200 $B $P --prewarm 4 --prewarm-only > "$out/prewarm.txt" 2>&1 &
pids="$pids $!"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only > "$out/prewarm_h.txt" 2>&1 &
pids="$pids $!"
timeout -s ABRT 200 python3 -X faulthandler -m pytest -q -p no:cacheprovider \
    -o faulthandler_timeout=170 tests/test_rows_gpu.py -k "repeat or replay or stream or place" \
    > "$out/t_rows.txt" 2>&1 &
tpid=$!
wait $pids
echo "prewarm: $(tail -n 1 $out/prewarm.txt) / $(tail -n 1 $out/prewarm_h.txt) at ${SECONDS}s"
wait $tpid
echo "t_rows rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' $out/t_rows.txt | tail -n 1)"
grep -h -E "^(FAILED|ERROR)|Timeout|Fatal Python" "$out"/t_rows.txt | head -10
grep -q "most recent call first" "$out/t_rows.txt" && grep -B 2 -A 30 -m 2 "most recent call first" "$out/t_rows.txt" | cut -c1-150
for round in 1 2; do
    for settle in 0 0.3; do
        timeout 100 $B $P --settle $settle --json "$out/bench_${settle}_$round.json" \
            > "$out/bench_${settle}_$round.txt" 2>&1
        echo "bench settle $settle round $round rc=$? at ${SECONDS}s"
        grep -E "^heuristic" "$out/bench_${settle}_$round.txt" | sed 's/^heuristic *//'
    done
done
timeout 150 python3 -m nbkernels.matmul.bench_hopper --json "$out/hopper.json" > "$out/hopper.txt" 2>&1
echo "bench_hopper rc=$? at ${SECONDS}s"
grep -v "^ *$" "$out/hopper.txt" | tail -n 10 | cut -c1-230
timeout 120 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -o "$out/g" python3 tools/profile_ncu.py gemm 8192x8192x1024 > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/g.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src_shortk.csv.gz"
timeout 60 ncu -i "$out/g.ncu-rep" --page details --print-summary none > "$out/details.txt" 2>&1
grep -E "^  [a-zA-Z_]|Duration|Compute \(SM\)|Throughput|Warp Cycles|Issued|SM Frequency" \
    "$out/details.txt" | cut -c1-110 | head -40
rm -f "$out/g.ncu-rep" "$out"/prewarm*.txt "$out"/bench_*.txt
echo "done at ${SECONDS}s"
