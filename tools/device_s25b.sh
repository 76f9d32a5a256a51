#!/usr/bin/env bash
# Session 25, run B (device tool, carry .whl; a warm machine after run A): a block per row
# against the automatic plan at every layout's row lengths (warp rows, blocks of 64-1024
# threads), then the benchmark with both (perf-notes r18).
. tools/device-preamble.sh
timeout ${SWEEP_S:-240} python3 tools/rows_layout_sweep.py --loops no \
    --shapes 262144x256,131072x512,65536x1024,32768x2048,32768x4096,8192x8192,4096x16384,2048x32768 \
    --json "$out/sweep_lengths.json" 2>&1 | grep -v Warning
echo "sweep done at ${SECONDS}s"
timeout ${BENCH_S:-300} python3 -m nbkernels.rows.bench --ops rms_norm,layer_norm,softmax \
    --dtypes bf16,f32 --modes auto,0 --json "$out/rows_bench_modes.json" 2>&1 | grep -v Warning
echo "bench done at ${SECONDS}s"
