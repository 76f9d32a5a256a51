"""The table of an A/B run of tools/rows_ab_quick.py (the device_s23a/s24a scripts):
``python tools/rows_ab_summary.py DIR`` reads DIR/quick_<tree><round>.json (trees ``old``,
``new``, or any other label, e.g. ``quick_na1.json``) and prints, per (op, dtype, shape), each
tree's rounds as % of copy and, for every tree but ``old``, the difference of its mean from
old's."""
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"quick_(.+)(\d)\.json$")  # one-digit rounds


def main(folder):
    res, trees = {}, []
    for f in sorted(glob.glob(folder + "/quick_*.json")):
        m = NAME.search(os.path.basename(f))
        if not m:
            continue
        tree = m.group(1)
        if tree not in trees:
            trees.append(tree)
        for r in json.load(open(f))["rows"]:
            key = (r["op"], r["dtype"], "x".join(map(str, r["shape"])))
            res.setdefault(key, {}).setdefault(tree, []).append(100 * r["of_copy"])
    trees.sort(key=lambda t: (t != "old", t != "new", t))
    for k, v in res.items():
        o = v.get("old", [])
        cells = []
        for t in trees:
            xs = v.get(t, [])
            cell = f"{t} {' '.join(f'{x:5.1f}' for x in xs):12s}"
            if t != "old":
                d = statistics.mean(xs) - statistics.mean(o) if o and xs else float("nan")
                cell += f" {d:+5.2f}"
            cells.append(cell)
        print(f"{' '.join(k):32s} " + "  ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
