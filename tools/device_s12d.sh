#!/usr/bin/env bash
# Session 12, run 4 (device tool, carry .whl): the sm90a tile whose staged stores are made by
# the producer's warps (offload, 128x256x3o): (1) its GPU tests (80-case sweep over five
# offload tiles, many tiles per block) with the default's; (2) bench_hopper's key shapes with
# 128x256x3 and 128x256x3o beside the default, burst (settle 0) and sustained (settle 0.3);
# (3) ncu stall samples of 128x256x3o against the default at 8192x8192x1024 (CSV to $OUT).
. tools/device-preamble.sh  # environment, log, GPU
C=128x256x3,128x256x3o
timeout 200 python3 -m nbkernels.matmul.bench_hopper --prewarm-only --configs $C \
    > /tmp/prewarm_h.txt 2>&1
echo "prewarm: $(tail -n 1 /tmp/prewarm_h.txt) at ${SECONDS}s"
timeout -s ABRT 280 python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 12 \
    tests/test_gemm_sm90a_gpu.py -k "offload or many_tiles or fused_bias_gelu" > /tmp/t.txt 2>&1
echo "t_sm90a rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal" /tmp/t.txt | head -10
grep -A 30 -m 1 "^____" /tmp/t.txt | head -40
for settle in 0 0.3; do
    extra=""; [ "$settle" = 0.3 ] && extra="--no-triton --no-sm80"
    timeout 200 python3 -m nbkernels.matmul.bench_hopper --configs $C --settle $settle $extra \
        --json "$out/hopper_$settle.json" > /tmp/h.txt 2>&1
    echo "bench_hopper settle $settle rc=$? at ${SECONDS}s"
    grep -E "^(bfloat16|float16)" /tmp/h.txt | cut -c1-260
done
timeout 120 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -o /tmp/g python3 tools/profile_ncu.py gemm 8192x8192x1024 128x256x3o > /tmp/ncu_run.txt 2>&1
echo "ncu rc=$? at ${SECONDS}s"; tail -n 2 /tmp/ncu_run.txt
timeout 60 ncu -i /tmp/g.ncu-rep --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src_offload.csv.gz"
timeout 60 ncu -i /tmp/g.ncu-rep --page details --print-summary none 2>&1 \
    | grep -E "^  [a-zA-Z_]|Duration|Compute \(SM\)" | cut -c1-100
echo "done at ${SECONDS}s"
