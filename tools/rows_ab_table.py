"""% of copy per op, dtype and shape from rows.bench JSON files in a folder, old tree against
new: ``python3 tools/rows_ab_table.py DIR`` reads DIR/bench_old1.json, bench_new1.json,
bench_old2.json, bench_new2.json (those present), as tools/device_rows_ab.sh and
tools/device_s9_rows.sh write them, and prints one line per case with the mean difference and
each tree's plan (threads, registers, buffers, blocks)."""
import json
import sys
from pathlib import Path
runs = {}
for f in sorted(Path(sys.argv[1]).glob("bench_*.json")):
    res = json.loads(f.read_text())
    runs[f.stem[6:]] = ({(r["op"], r["dtype"], "x".join(map(str, r["shape"]))): r
                         for r in res["rows"] if "of_copy" in r}, res["copy_GBps"])
print("copy GB/s: " + ", ".join(f"{k} {v[1]:.0f}" for k, v in runs.items()))
keys = sorted({k for recs, _ in runs.values() for k in recs})
cols = [c for c in ("old1", "new1", "old2", "new2") if c in runs]
print(f"{'op':11s} {'dtype':5s} {'shape':>10s} " + " ".join(f"{c:>6s}" for c in cols)
      + "  new-old  (% of copy)  threads, regs, buffers, blocks: old / new")
for k in keys:
    v = {c: runs[c][0][k]["of_copy"] * 100 for c in cols if k in runs[c][0]}
    old = [v[c] for c in v if c.startswith("old")]
    new = [v[c] for c in v if c.startswith("new")]
    d = f"{sum(new) / len(new) - sum(old) / len(old):+6.1f}" if old and new else "     -"
    plans = [runs[c][0][k].get("plan[auto]") or {} for c in ("old1", "new1") if c in runs
             and k in runs[c][0]]
    lay = " / ".join(f"{p.get('threads')}, {p.get('regs')}, {p.get('buffers')}, {p.get('blocks')}"
                     for p in plans)
    print(f"{k[0]:11s} {k[1]:5s} {k[2]:>10s} " +
          " ".join(f"{v[c]:6.1f}" if c in v else "     -" for c in cols) + f"  {d}  {lay}")
