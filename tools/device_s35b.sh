#!/usr/bin/env bash
# Session 35, run B: the sm90a GPU file, half by half (PART 1 or 2: tests of even or odd
# position in collection order, so each half mixes sweeps and the rest).
. tools/device-preamble.sh
. tools/device-pytest.sh
python3 -m pytest -q -p no:cacheprovider --collect-only tests/test_gemm_sm90a_gpu.py 2>/dev/null \
    | grep "::" > "$out/ids.txt"
awk -v p="${1:-1}" 'NR % 2 == p % 2' "$out/ids.txt" > "$out/part.txt"
echo "part $1: $(wc -l < "$out/part.txt") of $(wc -l < "$out/ids.txt") tests"
python3 -c "import pytest; print('pytest', pytest.__version__)"
# the ids as an argument file (pytest 8.2+): some hold spaces
gpu_tests 560 520 sm90a.txt -n 16 "@$out/part.txt"
