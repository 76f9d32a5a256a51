"""Plot a bench_hopper JSON (``python -m nbkernels.matmul.bench_hopper --json F``): TFLOPS per
shape of nbkernels' sm90a default, each extra config, cuBLAS and Triton, one panel per dtype.

    python tools/plot_sm90a.py bench90.json docs/gemm_sm90a_h200.png "title"
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = json.load(open(sys.argv[1]))
title = sys.argv[3] if len(sys.argv) > 3 else "sm90a GEMM vs cuBLAS and Triton"
dtypes = sorted({r["dtype"] for r in rows})
series = ["nbk"] + sorted({k for r in rows for k in r if k.startswith("nbk[") and
                           not k.endswith(("_err", "_host_us", "_passes"))}) + ["cublas", "triton"]
names = {"nbk": "nbkernels (default)", "cublas": "cuBLAS (torch)", "triton": "Triton"}
fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.5), squeeze=False)
for ax, dt in zip(axes[0], dtypes):
    rs = [r for r in rows if r["dtype"] == dt]
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(rs))]
        ax.bar(xs, [r.get(s, 0) or 0 for r in rs], width,
               label=names.get(s, s.replace("nbk[", "nbkernels ").rstrip("]")))
    ax.set_xticks(range(len(rs)))
    ax.set_xticklabels([f"{r['m']}x{r['n']}x{r['k']}" for r in rs], rotation=25, ha="right",
                       fontsize=8)
    ax.set_ylabel("TFLOPS")
    ax.set_title(f"{title}, {dt}", fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
print("wrote", sys.argv[2])
