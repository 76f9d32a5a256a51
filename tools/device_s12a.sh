#!/usr/bin/env bash
# Session 12, run 1 (device tool, carry .whl): (1) the row kernels' GPU file with faulthandler
# dumps (runs 2 and 5 of session 11 reached the last progress mark without a summary); (2) the
# two-pass (ABBA) benchmarks, first run on a GPU: sm80 forced bf16 / f16 at 4096^3 and 8192^3,
# then bench_hopper's key shapes; the SM clock and board power sampled during each.
. tools/device-preamble.sh  # environment, log, GPU
B="python3 -m nbkernels.matmul.bench"
P="--dtypes bf16,f16 --sizes 4096,8192 --variant sm80"
pids=""
timeout 240 $B $P --prewarm 4 --prewarm-only > "$out/prewarm.txt" 2>&1 &
pids="$pids $!"
timeout 240 python3 -m nbkernels.matmul.bench_hopper --prewarm-only > "$out/prewarm_h.txt" 2>&1 &
pids="$pids $!"
timeout -s ABRT 330 python3 -X faulthandler -m pytest -q -p no:cacheprovider \
    -o faulthandler_timeout=150 tests/test_rows_gpu.py > "$out/t_rows.txt" 2>&1 &
tpid=$!
wait $pids
echo "prewarm: $(tail -n 1 $out/prewarm.txt) / $(tail -n 1 $out/prewarm_h.txt) at ${SECONDS}s"
wait $tpid
echo "t_rows rc=$?: $(grep -E '[0-9]+ (passed|failed)' $out/t_rows.txt | tail -n 1) at ${SECONDS}s"
grep -h -E "^(FAILED|ERROR)|Timeout|Fatal Python|most recent call first" "$out"/t_rows.txt | head -20
grep -q "most recent call first" "$out/t_rows.txt" && grep -A 25 -m 1 "most recent call first" "$out/t_rows.txt"
smi() {  # $1: name; samples the SM clock and power until killed
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu \
        --format=csv,noheader -lms 100 > "$out/smi_$1.csv" &
    smi_pid=$!
}
clk() {
    kill $smi_pid
    python3 - "$out/smi_$1.csv" <<'PY'
import sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") == 3]
busy = [(int(r[1].split()[0]), float(r[2].split()[0]), int(r[3])) for r in rows
        if float(r[2].split()[0]) > 300]
if busy:
    clk = sorted(c for c, _, _ in busy)
    pw = sorted(p for _, p, _ in busy)
    print(f"  {len(busy)} samples over 300 W: SM clock median {clk[len(clk) // 2]} MHz "
          f"(min {clk[0]}, max {clk[-1]}), power median {pw[len(pw) // 2]:.0f} W "
          f"(max {pw[-1]:.0f}), temperature max {max(t for _, _, t in busy)} C")
PY
}
for round in 1 2; do
    smi sm80_$round
    timeout 150 $B $P --json "$out/bench_$round.json" > "$out/bench_$round.txt" 2>&1
    echo "bench round $round rc=$? at ${SECONDS}s"
    clk sm80_$round
done
python3 -m nbkernels.matmul.bench --summary "$out"/bench_1.json "$out"/bench_2.json
smi hopper
timeout 240 python3 -m nbkernels.matmul.bench_hopper --json "$out/hopper.json" > "$out/hopper.txt" 2>&1
echo "bench_hopper rc=$? at ${SECONDS}s"
clk hopper
grep -v "^ *$" "$out/hopper.txt" | tail -n 16
echo "done at ${SECONDS}s"
