"""The top SASS lines of an ncu source page (``ncu -i REP --page source --csv --print-source
sass``) by warp-stall samples, with each line's three largest stall reasons: the first
kernel's page only (device scripts: tools/device_s40d.sh, device_s43c.sh).

    python3 tools/ncu_lines.py OUT/src.csv [TOP]
"""
import csv
import sys


def main(argv):
    path, top = argv[0], int(argv[1]) if len(argv) > 1 else 30
    rows = list(csv.reader(open(path)))
    hi = next(i for i, r in enumerate(rows) if "Address" in r or "# Address" in r)
    h = rows[hi]
    col = next(i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All"))
    src = h.index("Source")
    reasons = [i for i, c in enumerate(h) if c.startswith("stall_")] or \
        [i for i, c in enumerate(h) if "Stall" in c and i != col]
    data = []
    for r in rows[hi + 1:]:
        if len(r) != len(h) or r[0] == h[0]:
            if data:
                break  # the next kernel's page
            continue
        try:
            data.append((float(r[col] or 0), r))
        except ValueError:
            pass
    tot = sum(x for x, _ in data)
    print(f"kernel 1: {len(data)} SASS lines, {tot:.0f} samples")
    for x, r in sorted(data, key=lambda t: -t[0])[:top]:
        worst = sorted(((float(r[i] or 0), h[i]) for i in reasons if r[i] not in ("", "0")),
                       reverse=True)[:3]
        print(f"{x:7.0f} {100 * x / tot:5.1f}% {r[0]:>6} {r[src][:60]:60s} "
              + " ".join(f"{n.replace('stall_', '')}={v:.0f}" for v, n in worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
