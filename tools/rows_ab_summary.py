"""The old / new table of an A/B run of tools/rows_ab_quick.py (the device_s23a/s24a scripts):
``python tools/rows_ab_summary.py DIR`` reads DIR/quick_old*.json and DIR/quick_new*.json and
prints, per (op, dtype, shape), each round's % of copy and the difference of the means."""
import glob
import json
import statistics
import sys


def main(folder):
    res = {}
    for f in sorted(glob.glob(folder + "/quick_*.json")):
        tree = "old" if "quick_old" in f else "new"
        for r in json.load(open(f))["rows"]:
            key = (r["op"], r["dtype"], "x".join(map(str, r["shape"])))
            res.setdefault(key, {}).setdefault(tree, []).append(100 * r["of_copy"])
    for k, v in res.items():
        o, n = v.get("old", []), v.get("new", [])
        d = statistics.mean(n) - statistics.mean(o) if o and n else float("nan")
        print(f"{' '.join(k):32s} old {' '.join(f'{x:5.1f}' for x in o):20s} "
              f"new {' '.join(f'{x:5.1f}' for x in n):20s} {d:+5.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
