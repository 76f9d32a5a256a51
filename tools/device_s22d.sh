#!/usr/bin/env bash
# Session 22, run D (device tool, carry .whl; a fresh machine): what run C's limits cut short,
# side by side: the simulator replay of every GPU probe and the rows' residency test (each
# compile-bound, alone in a process), and the other GPU files but the sm80-class GEMM, rows
# and sm90a ones, per test (-v).
. tools/device-preamble.sh
P="python3 -X faulthandler -m pytest -p no:cacheprovider -o faulthandler_timeout=500"
timeout -s ABRT 575 $P -q tests/test_intrinsics_gpu.py -k gives_the_gpus_bits > $OUT/t_d1.txt 2>&1 &
timeout -s ABRT 575 $P -q tests/test_rows_gpu.py -k resident_estimate > $OUT/t_d2.txt 2>&1 &
timeout -s ABRT 575 $P -v -n 12 -m gpu tests/ --ignore tests/test_gemm_gpu.py \
    --ignore tests/test_rows_gpu.py --ignore tests/test_gemm_sm90a_gpu.py \
    --deselect tests/test_intrinsics_gpu.py::test_simulator_gives_the_gpus_bits > $OUT/t_d3.txt 2>&1 &
wait $(jobs -p)
for f in d1 d2 d3; do
    echo "$f: $(grep -E '[0-9]+ (passed|failed)' $OUT/t_$f.txt | tail -n 1)"
    grep -E "^(FAILED|ERROR)| FAILED | ERROR " $OUT/t_$f.txt | head -5
done
echo "done at ${SECONDS}s"
