#!/usr/bin/env bash
# Session 7, on the staged default: (1) the GPU file's cluster tests, which run 7 x 5 cluster
# cases plus the fused and grid checks (session 7's first two calls stopped at their timeouts
# inside them, compiling; every case before had passed), after building the cluster configs in
# parallel; (2) ncu at 8192^3 bf16 of the staged default, the guarded one and cuBLAS: speed of
# light, warp states and the per-SASS-instruction stall samples (gzipped CSV to $OUT).
. tools/device-preamble.sh  # environment, log, GPU
timeout 150 python3 -m nbkernels.matmul.bench_hopper --prewarm-only \
    --configs 128x256x4c2,128x128x6c2,256x128x4wc2,128x128x6pc2,128x64x6c2,128x256x4g \
    > "$out/prewarm.txt" 2>&1
tail -n 1 "$out/prewarm.txt"
timeout 200 python3 -m pytest -q -p no:cacheprovider -o faulthandler_timeout=150 \
    tests/test_gemm_sm90a_gpu.py -k "cluster" > "$out/t_cluster.txt" 2>&1
echo "cluster tests rc=$?: $(grep -E "passed|failed" "$out/t_cluster.txt" | tail -n 1)"
grep -E "^(FAILED|ERROR)" "$out/t_cluster.txt" | head
timeout 150 ncu --profile-from-start off --print-summary none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -o "$out/g8192" python3 tools/profile_ncu.py gemm 8192 128x256x4g > "$out/ncu_run.txt" 2>&1
echo "ncu rc=$? at ${SECONDS}s"
timeout 60 ncu -i "$out/g8192.ncu-rep" --page source --csv --print-source sass 2>&1 \
    | gzip > "$out/src8192.csv.gz"
timeout 60 ncu -i "$out/g8192.ncu-rep" --page details --print-summary none > "$out/details.txt" 2>&1
grep -E "^  [a-zA-Z_]|Duration|Compute \(SM\)|Throughput|Warp Cycles|Issued" "$out/details.txt" \
    | cut -c1-110 | head -60
rm -f "$out/g8192.ncu-rep"
echo "done at ${SECONDS}s"
