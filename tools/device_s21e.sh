#!/usr/bin/env bash
# Session 21, run E (device tool, carry .whl): issue #4's report on the session's code, H100:
# the key shapes, the sm90a dispatch (deferred stores where a block has a next tile, split
# tail where it applies) against cuBLAS (torch) and Triton's matmul, two passes each, with the
# tile without deferred stores (128x256x4) beside; three rounds (ROUNDS), JSON each (key$r.json;
# round 2 is docs/gemm_sm90a_h100_s21.json).
. tools/device-preamble.sh
for r in $(seq ${ROUNDS:-3}); do
    timeout 180 python3 -m nbkernels.matmul.bench_hopper --shapes key --no-sm80 --configs 128x256x4 \
        --json "${OUT:-/tmp}/key$r.json" 2>&1 | grep -E "cublas=|rror" | cut -c1-250 | sed "s/^/$r /"
    echo "round $r done at ${SECONDS}s"
done
