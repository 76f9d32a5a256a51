#!/usr/bin/env bash
# Session 15, run A (device tool, carry .whl): (1) the sm90a tensor maps in nbkernels' own
# device store (tensormap.MapStore): the new test that crosses the store's bound on a
# non-blocking stream, the repeat / stream / persistent-tile tests beside it, and the same new
# test under compute-sanitizer memcheck; (2) ping-pong consumers measured again on today's
# kernel (last timed in session 4, before the s3 fix and the staged epilogue); (3) the f64 tile
# with 3 stages against the default at 2048^3 and 4096^3; (4) the small row call's host time.
. tools/device-preamble.sh  # environment, log, GPU
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -o faulthandler_timeout=200"
timeout -s ABRT 240 $T -n 16 tests/test_gemm_sm90a_gpu.py \
    -k "map_store or repeat or side_stream or many_tiles or fused_bias_gelu" > /tmp/t1.txt 2>&1
echo "sm90a tests rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' /tmp/t1.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)|Timeout|Fatal|assert" /tmp/t1.txt | head -12
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 \
    python3 -m pytest -q -p no:cacheprovider tests/test_gemm_sm90a_gpu.py -k map_store > /tmp/t2.txt 2>&1
echo "memcheck rc=$? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY|[0-9]+ (passed|failed)' /tmp/t2.txt | tr '\n' ' ')"
timeout 200 python3 -m nbkernels.matmul.bench_hopper --dtypes bf16 --no-triton --no-sm80 \
    --configs 128x128x6p,64x256x5p --json "${OUT:-/tmp}/pingpong.json" 2>&1 | tail -n 14
echo "pingpong done at ${SECONDS}s"
timeout 120 python3 -m nbkernels.matmul.bench --dtypes f64 --sizes 2048,4096 \
    --tiles "default;128,64,128,2,2,3,8,2" --json "${OUT:-/tmp}/f64.json" 2>&1 | tail -n 8
echo "f64 done at ${SECONDS}s"
timeout 60 python3 tools/host_rows.py 2>&1 | head -n 8
cp /tmp/t1.txt /tmp/t2.txt "${OUT:-/tmp}/" 2>/dev/null
echo "done at ${SECONDS}s"
