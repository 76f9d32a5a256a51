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
pids=""
for d in bf16 f32; do
    for op in rms_norm layer_norm softmax swiglu; do
        timeout 200 python3 tools/rows_ab_quick.py --ops $op --dtypes $d --reps 1 \
            > "$out/warm_${op}_$d.txt" 2>&1 &
        pids="$pids $!"
    done
    timeout 200 python3 -c "
import cupy, nbkernels
from nbkernels.rows import bench
x = cupy.ones((64, 4096), bench.dtype_named('$d'))
nbkernels.rms_norm(x, x[0], residual=x.copy()); cupy.cuda.runtime.deviceSynchronize()" \
        > "$out/warm_resid_$d.txt" 2>&1 &
    pids="$pids $!"
done
for op in rms_norm_residual layer_norm softmax swiglu_packed rms_norm; do
    timeout 300 python3 tools/sanitize_rows.py $op > "$out/san_$op.txt" 2>&1 &
    pids="$pids $!"
done
wait $pids
tail -q -n 1 "$out"/san_*.txt
echo "warm-up done at ${SECONDS}s"
timeout ${BENCH_S:-200} python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes ${MODES:-auto,2,0} \
    --json "$out/rows_bench.json" 2>&1 | grep -v Warning
echo "bench done at ${SECONDS}s"
for tool in memcheck racecheck; do
    timeout ${SAN_S:-100} compute-sanitizer --tool $tool --report-api-errors no \
        python3 tools/sanitize_rows.py 2>&1 | tail -3
    echo "$tool done at ${SECONDS}s"
done
[ "${TESTS:-1}" = 1 ] || exit 0
python3 -c "import xdist" 2>/dev/null && par="-n ${WORKERS:-10}" || par=""
timeout ${TEST_S:-280} python3 -m pytest -q -p no:cacheprovider $par tests/test_rows_gpu.py \
    > "$out/tests.txt" 2>&1
echo "tests rc=$? at ${SECONDS}s"
tail -n 2 "$out/tests.txt"; grep -E "^(FAILED|ERROR)" "$out/tests.txt" | head -20 || true
