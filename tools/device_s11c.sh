#!/usr/bin/env bash
# Session 11, run 3 (device tool, carry .whl): (1) the GEMM GPU file on this tree (run 2 cut
# it at its 300 s limit before its summary); (2) where a small call's host time goes now
# (tools/host_parts.py, every piece); (3) why config.WIDE_K is slower at 8192^3 than at 4096^3:
# rasterization groups of 4 / 8 / 16 and the 128x256 2-stage tile, with the SM clock and the
# board power sampled by nvidia-smi while the benchmark runs.
. tools/device-preamble.sh  # environment, log, GPU
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80
   --tiles default;128,128,128,2,2,3,4,2;128,128,128,2,2,3,16,2;128,256,128,2,4,2"
pids=""
timeout 240 $B $P --prewarm 4 --prewarm-only > "$out/prewarm.txt" 2>&1 &
pids="$pids $!"
timeout 420 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gemm_gpu.py \
    > "$out/t_gemm.txt" 2>&1 &
tpid=$!
wait $pids
echo "prewarm: $(tail -n 1 $out/prewarm.txt) at ${SECONDS}s"
wait $tpid
echo "t_gemm rc=$?: $(grep -E '[0-9]+ (passed|failed)' $out/t_gemm.txt | tail -n 1)"
grep -h -E "^(FAILED|ERROR)" "$out"/t_gemm.txt | head -20
echo "tests done at ${SECONDS}s"
timeout 90 python3 tools/host_parts.py > "$out/host.txt" 2>&1
echo "host rc=$?"; grep " us$" "$out/host.txt"
BF="--dtypes bf16,f16 --variant sm80
    --tiles default;128,128,128,2,2,3,4,2;128,128,128,2,2,3,16,2;128,256,128,2,4,2"
for size in 4096 8192; do
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu \
        --format=csv,noheader -lms 100 > "$out/smi_$size.csv" &
    smi=$!
    timeout 150 $B $BF --sizes $size --json "$out/bench_$size.json" > "$out/bench_$size.txt" 2>&1
    echo "bench $size rc=$? at ${SECONDS}s"
    kill $smi
    python3 - "$out/smi_$size.csv" <<'PY'
import sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") == 3]
busy = [(int(r[1].split()[0]), float(r[2].split()[0])) for r in rows
        if float(r[2].split()[0]) > 300]
if busy:
    clk = sorted(c for c, _ in busy)
    pw = sorted(p for _, p in busy)
    print(f"  {len(busy)} samples over 300 W: SM clock median {clk[len(clk) // 2]} MHz "
          f"(min {clk[0]}, max {clk[-1]}), power median {pw[len(pw) // 2]:.0f} W (max {pw[-1]:.0f})")
PY
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_4096.json "$out"/bench_8192.json
echo "done at ${SECONDS}s"
