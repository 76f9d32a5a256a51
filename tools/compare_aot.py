"""Compare two ``nbkernels compile --out`` folders (session 14: the shared front end against
separate compiles): PTX per (arch, variant) with numba's per-compile numbering of symbols
replaced by order of appearance, and the report's registers, shared memory, spills, stack,
tensor ops and status. ``python tools/compare_aot.py BASE NEW``; exits 1 on a difference."""
import json
import sys
from pathlib import Path

from nbkernels.aot import numbered_out


def main(base, new):
    base, new = Path(base), Path(new)
    fields = ("status", "registers", "static_smem", "dynamic_smem", "spill_stores",
              "spill_loads", "stack", "tensor_ops")
    rows = {}
    for which, d in (("base", base), ("new", new)):
        for r in json.loads((d / "report.json").read_text())["rows"]:
            rows.setdefault((r["arch"], r["variant"]), {})[which] = r
    bad = same = 0
    for (arch, variant), pair in sorted(rows.items()):
        b, n = pair.get("base"), pair.get("new")
        if b is None or n is None:
            print(f"only in {'new' if b is None else 'base'}: {arch} {variant}")
            bad += 1
            continue
        diffs = [f for f in fields if b.get(f) != n.get(f)]
        stem = variant.replace("/", "__") + ".ptx"
        pb, pn = base / arch / stem, new / arch / stem
        if pb.exists() != pn.exists() or (pb.exists() and numbered_out(pb.read_text()) !=
                                          numbered_out(pn.read_text())):
            diffs.append("ptx")
        if diffs:
            bad += 1
            print(f"DIFFERENT {arch} {variant}: {diffs}")
        else:
            same += 1
    tb = json.loads((base / "report.json").read_text())["seconds"]
    tn = json.loads((new / "report.json").read_text())["seconds"]
    print(f"{same} builds the same, {bad} different; wall {tb:.0f} s -> {tn:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
