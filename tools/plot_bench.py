"""Plot a bench JSON (``python -m nbkernels.matmul.bench --json F``) as TFLOPS per shape.

    python tools/plot_bench.py bench.json docs/gemm_sweep.png "title"
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = json.load(open(sys.argv[1]))
title = sys.argv[3] if len(sys.argv) > 3 else "nbkernels.gemm vs cuBLAS"
labels = [f"{r['m']}x{r['n']}x{r['k']}" for r in rows if r["dtype"] == rows[0]["dtype"]]
fig, ax = plt.subplots(figsize=(11, 4.5))
for dt in sorted({r["dtype"] for r in rows}):
    rs = [r for r in rows if r["dtype"] == dt]
    x = range(len(rs))
    ax.plot(x, [r["nbk_tflops"] for r in rs], "o-", label=f"nbkernels {dt}")
    ax.plot(x, [r["cublas_tflops"] for r in rs], "s--", label=f"cuBLAS {dt}")
ax.set_xticks(range(len(labels)))
ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
ax.set_ylabel("TFLOPS")
ax.set_title(title)
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
