#!/usr/bin/env bash
# Session 8, run 8: the new asv family rows.RowCallOverhead, measured the way asv's setup_cache
# does (its prewarm, then its measure functions), and gemm.CallOverhead beside it.
. tools/device-preamble.sh  # environment, log, GPU
cd benchmarks_asv && PYTHONPATH=$PWD:$PYTHONPATH timeout 300 python3 - <<'PY'
from benchmarks import gemm, rows
for t in [t for t in rows.prewarm_tasks() if t[0] == "call"]:
    rows.prewarm(t)
for t in [t for t in gemm.prewarm_tasks() if t[0] == "call"]:
    gemm.prewarm(t)
empty = rows._empty_launch_seconds()
print(f"empty CuPy launch {empty * 1e6:.2f} us")
for mode in rows.CALL_MODES:
    r = rows._measure_call(mode, empty)
    print(f"RowCallOverhead {mode}: {r['seconds'] * 1e6:.2f} us, {r['vs_empty_launch']:.2f}x the empty launch")
    g = gemm._measure_call(mode)
    print(f"CallOverhead {mode}: {g['seconds'] * 1e6:.2f} us, {g['vs_cupy']:.2f}x cupy.matmul's speed")
PY
echo "done at ${SECONDS}s"
