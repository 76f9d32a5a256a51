"""Rewrite the instruction table in docs/intrinsics.md from the registry (run after adding one)."""
from pathlib import Path

from nbkernels.intrinsics import REGISTRY, SHIPPED
from nbkernels.intrinsics.factory import python_params

rows = ["| intrinsic | call | returns | PTX | min arch | min PTX ISA | SASS | notes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for n in SHIPPED:
    s = REGISTRY[n].spec
    ret = ", ".join(f"{s.shape_var.describe()} x {o.type}" if o.variable
                    else f"{o.count} x {o.type}" if o.count > 1 else str(o.type)
                    for o in s.outputs)
    group = "warpgroup-collective" if s.sim_group == 128 else "warp-collective"
    flags = [f for f, on in ((group, s.convergent), ("memory", s.memory)) if on]
    rows.append(f"| `{n}` | `{n}({', '.join(python_params(s))})` | {ret or '-'} | "
                f"`{s.ptx_name}` | {s.min_arch} | {s.min_ptx[0]}.{s.min_ptx[1]} | "
                f"{', '.join(s.sass) or '-'} | {', '.join(flags)} |")
doc = Path(__file__).resolve().parents[1] / "docs" / "intrinsics.md"
text = doc.read_text()
start = text.index("| intrinsic | call |")
end = text.index("\n\nTemplates and operand lists")
doc.write_text(text[:start] + "\n".join(rows) + text[end:])
print(f"{len(SHIPPED)} intrinsics written to {doc}")
