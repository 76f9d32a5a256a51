#!/usr/bin/env bash
# Session 5, run 2 (device tool, carry .whl; about 7 minutes).
# 1. Row kernels with a ring of 4 staging buffers (perf-notes r7): the ring's GPU tests, then
#    the benchmark with modes auto (the new plan), 0 (a block per row), 2 and 4 on the same
#    inputs.
# 2. f64 tiles (perf-notes d3): pipeline depth and warp layouts of the dmma kernel.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="python3 -m pytest -q -p no:cacheprovider"
B="python3 -m nbkernels.matmul.bench"
TILES="default;128,128,128,2,4,4;128,128,128,4,2,3;128,64,128,2,2,4;64,128,128,2,2,3"
F64="--dtypes f64 --sizes 4096,8192"
timeout 240 $B $F64 --tiles "$TILES" --prewarm 4 --prewarm-only > "$out/prewarm64.txt" 2>&1 &
timeout 240 $T tests/test_rows_gpu.py -k "loop4 or warploop4 or loop_modes or resident" \
    > "$out/t_rows_ring.txt" 2>&1 &
wait $(jobs -p)  # not a bare wait: that also waits for the tee of the log
echo "ring tests: $(tail -n 1 "$out/t_rows_ring.txt")"
grep -E "^(FAILED|ERROR)" "$out/t_rows_ring.txt" | head -5
tail -n 1 "$out/prewarm64.txt"; echo "parallel phase done at ${SECONDS}s"
timeout 200 python3 -m nbkernels.rows.bench --dtypes bf16,f32 --modes auto,0,2,4 \
    --json "$out/rows_bench.json" > "$out/rows_bench.txt" 2>&1 || echo "rows bench rc=$?"
python3 - "$out/rows_bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
modes = d["modes"]
for r in d["rows"]:
    if "of_copy" not in r:
        continue
    cells = "  ".join(f'{m}:{100 * r[f"of_copy[{m}]"]:5.1f}%' for m in modes)
    p = r[f"plan[{modes[0]}]"]
    print(f'{r["op"]:18} {r["dtype"]:4} {r["shape"][0]:5}x{r["shape"][1]:<5} {cells}  '
          f'torch x{r.get("torch_us", 0) / r["nbk_us"]:.2f}  [auto {p.get("blocks")}x'
          f'{p.get("threads")} {p.get("buffers")} buf {p.get("regs")} regs]')
PY
echo "rows done at ${SECONDS}s"
timeout 150 $B $F64 --tiles "$TILES" --reps 20 --json "$out/bench_f64_tiles.json" \
    || echo "f64 bench rc=$?"
echo "done at ${SECONDS}s"
