"""Static SASS instructions per element of the row kernels' per-row loop.

``python -m nbkernels.rows.sasscount DIR`` reads the ``rows__*.sass`` files that
``python -m nbkernels compile --arch sm_90a --only 'rows/*' --out DIR`` wrote and, for each,
walks the loop that blocks run per row (the natural loop whose body holds the cp.async of the
next row, LDGSTS) along its common path: every branch taken the way a full row of a block
layout goes (the next row staged, the barrier of a block-wide reduction, 16-byte stores rather
than the masked per-element tail, the fast reciprocal rather than its slow path). Found as the
path through the loop body that holds the most of those landmark instructions and, among
those, the fewest instructions. Inner loops (the sum over a block's warp partials) are
counted once per row. Divided by the elements a thread holds per row (32, or 64 in
layer_norm's 16-bit kernels), that is the issue cost per element a profile measures in the
row loop, less the inner loops' repeats.
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
TARGET = re.compile(r"`\(([^)]*)\)")
#: on the common path of a full row: the next row's copies, the block reduction's barrier and
#: shuffles, 16-byte shared loads and global stores
LANDMARKS = ("LDGSTS", "BAR.SYNC", "SHFL.BFLY", "LDS.128", "STG.E.128", "STG.E.64")
#: off it: the per-element tail of a partial row, the slow-path calls
AVOID = ("STG.E.U16", "LDG.E.U16", "CALL.REL")


def per_thread(stem: str) -> int:
    """Elements a thread holds per row in the kernel of a ``rows__<op>__<kind>`` file."""
    from .device import PER_THREAD
    from .layer_norm_kernel import per_thread as layer_norm_per_thread
    from .rms_norm_kernel import WIDE_PER_THREAD
    _, op, kind = stem.split("__")
    if op == "rms_norm_wide":
        return WIDE_PER_THREAD
    return layer_norm_per_thread(kind) if op.startswith("layer_norm") else PER_THREAD


def element_bytes(stem: str) -> int:
    from .device import ELEMENT_BYTES
    return ELEMENT_BYTES[stem.split("__")[2]]


def parse(text: str):
    """[(addr, guard, opcode, operands, label-or-None)] of the kernel's .text section."""
    out, pending, inside = [], None, False
    for line in text.splitlines():
        if line.startswith(".text."):
            inside = True
            continue
        if not inside:
            continue
        if line.lstrip().startswith((".section", "//----")) and out:
            break
        m = LABEL.match(line)
        if m:
            pending = m.group(1)
            continue
        m = LINE.search(line)
        if m:
            out.append((int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3),
                        m.group(4), pending))
            pending = None
    return out


def blocks(ins):
    """Basic blocks: list of (start index, end index exclusive) and successor lists."""
    label_at = {lab: i for i, (_, _, _, _, lab) in enumerate(ins) if lab}
    starts = {0} | set(label_at.values())
    for i, (_, g, op, ops, _) in enumerate(ins):
        if op.startswith(("BRA", "EXIT", "RET", "BRX")) and i + 1 < len(ins):
            starts.add(i + 1)
    starts = sorted(starts)
    bl = [(s, e) for s, e in zip(starts, starts[1:] + [len(ins)])]
    index = {s: k for k, (s, _) in enumerate(bl)}
    succ = []
    for k, (s, e) in enumerate(bl):
        _, g, op, ops, _ = ins[e - 1]
        nxt = [k + 1] if k + 1 < len(bl) else []
        if op.startswith("BRA"):
            t = TARGET.search(ops)
            tgt = [index[label_at[t.group(1)]]] if t and t.group(1) in label_at else []
            succ.append(tgt + (nxt if g or op.startswith("BRA.DIV") else []))
        elif op.startswith(("EXIT", "RET")):
            succ.append(nxt if g else [])
        else:
            succ.append(nxt)
    return bl, succ


def weight(ins, s, e):
    lm = sum(1 for i in range(s, e) if ins[i][2].startswith(LANDMARKS) and ins[i][1] != "@!PT")
    bad = sum(1 for i in range(s, e) if ins[i][2].startswith(AVOID))
    n = sum(1 for i in range(s, e) if ins[i][1] != "@!PT" and ins[i][2] not in ("NOP",))
    return lm, bad, n


def _reaches(succ, h, k):
    """Block ``k`` is reached from ``h`` by forward edges inside [h, k]."""
    seen, todo = {h}, [h]
    while todo:
        b = todo.pop()
        for s in succ[b]:
            if b < s <= k and s not in seen:
                seen.add(s)
                todo.append(s)
    return k in seen


def row_loop(ins, bl, succ):
    """(header, latch) of the largest back edge whose body holds LDGSTS and whose latch the
    header reaches inside the body: the jump back from a divergent shuffle's fallback
    (``BRA.DIV`` to ``ENDCOLLECTIVE`` stubs after the kernel's exits) is not a loop."""
    best = None
    for k, ss in enumerate(succ):
        for h in ss:
            if h <= k and _reaches(succ, h, k):
                body = range(bl[h][0], bl[k][1])
                if any(ins[i][2].startswith("LDGSTS") for i in body):
                    size = bl[k][1] - bl[h][0]
                    if best is None or size > best[0]:
                        best = (size, h, k)
    if best is None:
        raise ValueError("no loop with LDGSTS found")
    return best[1], best[2]


def inner_trips(ins, bl, succ, h, latch, groups):
    """{block: times it runs per row} for the inner loops of the row loop: a loop over the
    16-byte groups of a thread's row (its body has a 16-byte shared load) runs ``groups``
    times, or ``groups / k`` when the compiler unrolled k groups into one iteration (k
    16-byte global stores in its body: swiglu f32); the sum over a block's warp partials
    (scalar shared loads) runs 8 times (256 threads) over as many loads as the compiler
    unrolled into one iteration."""
    mult = {}
    for k in range(h, latch + 1):
        for t in succ[k]:
            if h < t <= k:
                body = range(bl[t][0], bl[k][1])
                lds128 = sum(1 for i in body if ins[i][2].startswith("LDS.128"))
                lds = sum(1 for i in body if ins[i][2] == "LDS" and ins[i][1] != "@!PT")
                stg = sum(1 for i in body if ins[i][2].startswith("STG.E.128"))
                trips = max(1, groups // max(stg, 1)) if lds128 else max(1, 8 // max(lds, 1))
                for b in range(t, k + 1):
                    mult[b] = mult.get(b, 1) * trips
    return mult


def hot_path(ins, bl, succ, h, latch, mult):
    """Blocks of the best path h -> latch (forward edges only inside [h, latch])."""
    score = {}
    for k in range(latch, h - 1, -1):
        lm, bad, n = weight(ins, *bl[k])
        f = mult.get(k, 1)
        lm, bad, n = lm * f, bad * f, n * f
        if k == latch:
            score[k] = ((lm, -bad, -n), [k])
            continue
        opts = [score[s] for s in succ[k] if k < s <= latch and s in score]
        if not opts:
            continue
        (blm, bbad, bn), path = max(opts, key=lambda o: o[0])
        score[k] = ((blm + lm, bbad - bad, bn - n), [k] + path)
    return score[h][1]


def count(text: str, groups: int):
    """(opcode counts per row on the common path, the path's blocks, instructions, blocks,
    multiplicities)."""
    ins = parse(text)
    bl, succ = blocks(ins)
    h, latch = row_loop(ins, bl, succ)
    mult = inner_trips(ins, bl, succ, h, latch, groups)
    path = hot_path(ins, bl, succ, h, latch, mult)
    ops = Counter()
    for k in path:
        s, e = bl[k]
        for i in range(s, e):
            if ins[i][1] != "@!PT" and ins[i][2] != "NOP":
                ops[ins[i][2]] += mult.get(k, 1)
    return ops, path, ins, bl, mult


def main(argv):
    root = Path(argv[0] if argv else "/tmp/rc")
    files = sorted(root.rglob("rows__*.sass"))
    verbose = "-v" in argv
    print(f"{'kernel':32} {'instr/row':>9} {'per elem':>8}  top opcodes")
    for f in files:
        P = per_thread(f.stem)
        ops, path, ins, bl, mult = count(f.read_text(), P * element_bytes(f.stem) // 16)
        tot = sum(ops.values())
        agg = Counter()
        for o, c in ops.items():
            agg[o.split(".")[0]] += c
        top = " ".join(f"{o}:{c}" for o, c in agg.most_common(10))
        print(f"{f.stem:32} {tot:9d} {tot / P:8.1f}  {top}")
        if verbose:
            for k in path:
                s, e = bl[k]
                print(f"  block {k} x{mult.get(k, 1)}")
                for i in range(s, e):
                    a, g, op, rest, lab = ins[i]
                    print(f"    {lab or '':8} {a:05x} {g:5} {op}{rest}")


if __name__ == "__main__":
    main(sys.argv[1:])
