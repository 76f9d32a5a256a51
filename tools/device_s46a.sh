#!/usr/bin/env bash
# Session 46, run A (H200; carry .whl; measurement only): the row benchmark on this
# tree (the last full table was session 32's, before the layer_norm loop and replay changes of
# sessions 33-45), float16 included; then the GEMM GPU tests of repeat calls and replays
# (the split tail's dispatch among them), not run on a GPU since session 45 wrote the CuPy
# calls into the GEMM replays.
. tools/device-preamble.sh
. tools/device-pytest.sh
timeout 330 python3 -m nbkernels.rows.bench --dtypes bf16,f16,f32 --json "$out/rows_bench.json" \
    2>&1 | grep -v Warning
echo "bench rc=$? at ${SECONDS}s"
left=$((560 - SECONDS))
if ((left > 60)); then
    gpu_tests $left $((left - 10)) gemm_replay.txt tests/test_gemm_sm90a_gpu.py \
        tests/test_gemm_gpu.py -k "repeat or replay"
fi
echo "done at ${SECONDS}s"
