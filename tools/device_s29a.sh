#!/usr/bin/env bash
# Session 29, run A (device tool, carry .whl; perf-notes r20, measurement only): 16-bit
# layer_norm with its weight and bias in x's dtype, absent, or float32 (what the staged vectors'
# shared memory costs), rms_norm bf16 beside it; then float32 layer_norm at 32768x4096 twice
# (the automatic plan against blocks of two rows, r19's lead).
. tools/device-preamble.sh
args=(--dtypes bf16 --per-sm 3,4 --rows-per-block yes)
for vec in same none f32; do
    ops=layer_norm; [ $vec = same ] && ops=rms_norm,layer_norm
    echo "--- vectors $vec"
    timeout 240 python3 tools/rows_layout_sweep.py "${args[@]}" --ops $ops --ln-vectors $vec \
        --json "$out/sweep_$vec.json" 2>&1 | grep -v "^ *$" | tail -n 8
done
for i in 1 2; do
    echo "--- f32 layer_norm 32768x4096, process $i"
    timeout 120 python3 tools/rows_layout_sweep.py --ops layer_norm --dtypes f32 \
        --shapes 32768x4096 --per-sm 3 --rows-per-block yes --json "$out/f32_$i.json" 2>&1 \
        | grep -v "^ *$" | tail -n 3
done
python3 - "$out" <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for c in json.load(open(f))["cases"]:
        print(f.rsplit("/", 1)[1], c["op"], c["dtype"], "x".join(map(str, c["shape"])))
        for r in c["results"]:
            p = r["plan"]
            print(f"   {r['layout']:12s} {100 * r['of_copy']:5.1f}  {p.get('blocks')}x"
                  f"{p.get('threads')} buf {p.get('buffers')} regs {p.get('regs')} "
                  f"smem {p.get('smem')}")
PY
echo "done at ${SECONDS}s"
