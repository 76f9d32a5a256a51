#!/usr/bin/env bash
# Session 25, run G (device tool, carry .whl; either GPU): the layout rule of perf-notes r18 as
# committed (a block per row at <= 30 GB/s an SM, pairs above): the bandwidth per SM the host
# reads; the row benchmark with the automatic plan, a ring of 2 (the loop) and a block
# per row; the sanitizer cases under memcheck and racecheck; then the whole row GPU file.
. tools/device-preamble.sh
python3 -c "
from numba import cuda
from nbkernels.rows import host
d = cuda.get_current_device()
print('memory clock', d.MEMORY_CLOCK_RATE, 'kHz, bus', d.GLOBAL_MEMORY_BUS_WIDTH, 'bits,',
      d.MULTIPROCESSOR_COUNT, 'SMs:', round(host.dram_gbps_per_sm(d), 2), 'GB/s an SM')"
. tools/device-warm-rows.sh
warm_rows "rms_norm layer_norm softmax swiglu" "bf16 f32" resid sanitize
timeout ${BENCH_S:-200} python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes ${MODES:-auto,2,0} \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
echo "bench done at ${SECONDS}s"
sanitize_rows
[ "${TESTS:-1}" = 1 ] || exit 0
python3 -c "import xdist" 2>/dev/null && par="-n ${WORKERS:-10}" || par=""
timeout ${TEST_S:-280} python3 -m pytest -q -p no:cacheprovider $par tests/test_rows_gpu.py \
    > "$out/tests.txt" 2>&1
echo "tests rc=$? at ${SECONDS}s"
tail -n 2 "$out/tests.txt"; grep -E "^(FAILED|ERROR)" "$out/tests.txt" | head -20 || true
