#!/usr/bin/env bash
# Session 40, run D (H200; carry .whl): run C found ours at K = 64 (one tile a block, one
# k-tile) 11.5 us under ncu where cuBLAS took 6.8 (16.4k against 9.4k cycles), far more than
# the 1.2 us of the warm K sweep. Is that ncu's cache flush (cold instruction/constant caches
# and L2) or the kernel? (1) ncu without cache flush or clock lock, durations only, K = 64
# and 512; (2) ncu with its flush, the per-SASS-instruction stall samples of ours at K = 64
# (top lines printed, the page gzipped); (3) the warm bench at K = 64, 128, 256 beside cuBLAS.
# (As run, step 1 was written inline and also read sm__cycles_elapsed.max; it is
# ab-lib.sh's ab_ncu_duration now, shared with device_s40e.sh and device_s41a.sh.)
. tools/device-preamble.sh
. tools/ab-lib.sh
for k in 64 512; do ab_ncu_duration "$PWD" warm none 1536x2816x$k; done
timeout 150 ncu --profile-from-start off --section SourceCounters --section WarpStateStats \
    -o "$out/k64" python3 tools/profile_ncu.py gemm 1536x2816x64 > /dev/null 2>&1
echo "ncu source rc=$? at ${SECONDS}s"
timeout 90 ncu -i "$out/k64.ncu-rep" --page source --csv --print-source sass 2>/dev/null > "$out/src_k64.csv"
python3 tools/ncu_lines.py "$out/src_k64.csv" 30
gzip -f "$out/src_k64.csv"; rm -f "$out/k64.ncu-rep"
timeout 150 python3 -m nbkernels.matmul.bench --dtypes bf16 --sizes 1536x2816x64,1536x2816x128,1536x2816x256 \
    --reps 40 2>&1 | grep heuristic | cut -c1-150
echo "done at ${SECONDS}s"
