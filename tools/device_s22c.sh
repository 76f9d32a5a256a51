#!/usr/bin/env bash
# Session 22, run C (device tool, carry .whl; the machine of B2): what run B's two calls did not
# reach of the sm80-class GEMM and row GPU files (the tests they reported PASSED are listed in
# .device_lists/passed_b.txt and deselected), the other GPU files but the sm90a one, then the
# sm90a dispatch tests on this tree (stages_in replaced stages_epilogue).
. tools/device-preamble.sh
T="python3 -X faulthandler -m pytest -q -p no:cacheprovider -n 16 -o faulthandler_timeout=200"
NBK_SKIP_LISTED=.device_lists/passed_b.txt timeout -s ABRT 220 $T -p tools.pytest_skip_listed \
    tests/test_gemm_gpu.py tests/test_rows_gpu.py > $OUT/t_c1.txt 2>&1
echo "rest of B rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed|deselected)' $OUT/t_c1.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" $OUT/t_c1.txt | head -8
timeout -s ABRT $((480 - SECONDS)) $T -m gpu tests/ --ignore tests/test_gemm_gpu.py \
    --ignore tests/test_rows_gpu.py --ignore tests/test_gemm_sm90a_gpu.py > $OUT/t_c2.txt 2>&1
echo "other GPU files rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' $OUT/t_c2.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" $OUT/t_c2.txt | head -8
timeout -s ABRT $((585 - SECONDS)) $T tests/test_gemm_sm90a_gpu.py \
    -k "default_dispatch or fused_bias_gelu or splits_a_short" > $OUT/t_c3.txt 2>&1
echo "sm90a dispatch rc=$? at ${SECONDS}s: $(grep -E '[0-9]+ (passed|failed)' $OUT/t_c3.txt | tail -n 1)"
grep -E "^(FAILED|ERROR)" $OUT/t_c3.txt | head -8
