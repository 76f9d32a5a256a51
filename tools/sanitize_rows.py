"""Row kernels at edge shapes in every layout, for compute-sanitizer (memcheck, racecheck).

    compute-sanitizer --tool memcheck --report-api-errors no python3 tools/sanitize_rows.py [OP]

With OP, only the cases of that op (fewer kernels to compile under the sanitizer); with
``regs``, only the register-row layout's cases; with ``warps``, the blocks of whole warps
that are no power of two; with ``narrow``, the narrow rows' builds; with ``shifted``, softmax
on misaligned rows in place and the padded copies' kernel; with ``lanes``, softmax's lanes
layout (several short rows a warp: softmax, rms_norm, layer_norm); with ``lanes:OP``, OP's
cases of it.
"""
import sys

import numpy as np

sys.path.insert(0, "tests")
from row_cases import run_case  # noqa: E402

CASES = [  # op, dtype, shape, layout, special, variant
    ("rms_norm_residual", "bfloat16", (5, 1000), "contig", None, None),       # warp, tails
    ("layer_norm", "float16", (3, 3000), "contig", None, None),               # block
    ("softmax", "float32", (2, 20000), "contig", None, None),                 # split
    ("softmax", "bfloat16", (4, 777), "misaligned", None, "block"),           # padded copies
    ("swiglu_packed", "float16", (3, 4100), "transposed", None, "split256"),  # split, copies
    ("rms_norm", "float32", (9, 33), "rowstride", None, "warp"),
    ("layer_norm", "bfloat16", (1, 1), "contig", None, None),
    # layer_norm in 16 bits holds 64 elements a thread (perf-notes r13): 128 threads looping
    # over rows one short of full, a split row whose last chunk holds one element, full warps
    ("layer_norm", "bfloat16", (5, 8191), "contig", None, None),
    ("layer_norm", "float16", (2, 4097), "contig", None, "split"),
    ("layer_norm", "bfloat16", (9, 2048), "contig", None, "warploop"),
    # one barrier a row on several warps (perf-notes r16): blocks looping over whole rows
    # reuse the exchange's two slot sets alternately (2 warps a row, 64 threads)
    ("layer_norm", "bfloat16", (9, 4096), "contig", None, "loop2"),
    ("layer_norm", "float32", (7, 2048), "contig", "offset", "loop1"),
    # blocks of two rows in row order, the last block one (perf-notes r18)
    ("rms_norm", "bfloat16", (7, 2000), "contig", None, "pairs"),
    ("softmax", "float16", (7, 2048), "contig", None, "pairs"),
    # float32 layer_norm takes the pairs at 128 threads (perf-notes r22)
    ("layer_norm", "float32", (7, 2000), "contig", None, "pairs"),
    # rms_norm's 64-element 16-bit build (perf-notes r27): a block per row, a partial thread,
    # blocks looping with two buffers, a split row; the 32-element build in one-buffer pairs
    ("rms_norm", "bfloat16", (5, 8191), "contig", None, "wide"),
    ("rms_norm", "float16", (5, 3000), "contig", None, "wideloop"),
    ("rms_norm", "bfloat16", (2, 9000), "contig", None, "widesplit"),
    ("rms_norm", "bfloat16", (7, 4000), "contig", None, "pairs1"),
    # 16-bit layer_norm beside float32 weight and bias: two row groups a block share one copy
    # of them (perf-notes r35): an odd row count (a group without a row passes the vectors'
    # barrier only), blocks looping with two buffers, pairs
    ("layer_norm", "bfloat16", (7, 8192), "contig", "vecs32", None),
    ("layer_norm", "float16", (9, 4096), "contig", "vecs32", "loop2"),
    ("layer_norm", "bfloat16", (7, 2000), "contig", "vecs32", "pairs"),
    # the register-row layout (perf-notes r43): rows one short of 128 threads' 8192, partial
    # threads of a row of a stride, one warp a row beside float32 vectors, a padded copy
    ("layer_norm", "bfloat16", (5, 8191), "contig", None, "regs"),
    ("softmax", "float16", (3, 5000), "contig", "big", "regs"),
    ("rms_norm", "bfloat16", (4, 4097), "rowstride", None, "regs"),
    ("layer_norm", "float16", (3, 1000), "contig", "vecs32", "regs32"),
    ("softmax", "bfloat16", (2, 300), "misaligned", None, "regs64"),
    ("layer_norm", "float16", (3, 5120), "contig", None, "regsauto"),  # 160 threads of 32
    ("softmax", "bfloat16", (2, 6144), "contig", None, "regsauto"),  # 192 threads of 32
    ("layer_norm", "bfloat16", (3, 8192), "contig", None, "regsauto"),  # 256 threads of 32
    ("softmax", "float16", (3, 2500), "contig", None, "regsauto"),  # 96 of 32, one partial
]
# rows on the fewest whole warps that cover them (perf-notes r47), selected by ``warps``:
# float32 rows of 3000 staged on 96 threads, 16-bit rows of 5000 with a residual on 160 (the
# last thread partial), a forced looping block of 96 whose two row groups share the vectors on
# named barriers, register rows of 5000 on 160 threads of 32
WARPS = [
    ("layer_norm", "float32", (5, 3000), "contig", None, None),
    ("rms_norm_residual", "bfloat16", (7, 5000), "contig", None, None),
    ("layer_norm", "bfloat16", (7, 3000), "contig", "vecs32", "block96loop"),
    ("softmax", "float16", (3, 5000), "contig", None, "regsauto"),
]
CASES += WARPS
# rows in the warp layout on builds of as many slot groups a lane as they need (perf-notes
# r54, r55), selected by ``narrow``: rows of 768 on 24 elements a lane (every lane full), 16-bit
# layer_norm's 1536 on 48 beside float32 vectors its warps share, 500 on 24 (a padded copy;
# every lane masked), 100 on 8 (float32), a row of a stride
NARROW = [
    ("layer_norm", "bfloat16", (9, 768), "contig", None, None),
    ("layer_norm", "float16", (7, 1536), "contig", "vecs32", None),
    ("softmax", "bfloat16", (5, 500), "contig", None, None),
    ("rms_norm_residual", "float16", (7, 768), "contig", None, None),
    ("rms_norm", "float32", (5, 100), "rowstride", None, None),
    # on a block of 64 threads (r55): 16-bit rows of 1536 on 24 a thread, 1100 (the second
    # warp's last group idle), 16-bit layer_norm's staged rows of 3000 on 48 beside float32
    # vectors two row groups share (as where no register rows are)
    ("softmax", "bfloat16", (5, 1536), "contig", None, None),
    ("rms_norm_residual", "float16", (7, 1100), "contig", None, None),
    ("layer_norm", "bfloat16", (7, 3000), "contig", "vecs32", "stagedauto"),
]
CASES += NARROW
# softmax on misaligned rows worked on where they are (perf-notes r59), selected by
# ``shifted``: rows on a warp, on a block (registers on the H200), split with a row's last
# chunk empty where its head is short, float32, split rows staged whole (r62); and the padded
# copies' kernel
# (rows/padcopy.py) of the ops that still copy: 2-byte units (rms_norm + residual at 197) and
# 4-byte ones (float32 layer_norm of a row stride)
SHIFTED = [
    ("softmax", "bfloat16", (9, 197), "contig", None, None),
    ("softmax", "float16", (5, 4099), "contig", None, None),
    ("softmax", "bfloat16", (4, 50257), "contig", None, None),
    ("softmax", "float32", (3, 20001), "contig", None, None),
    # split rows staged whole, a block a row (r62): 3 chunks; 7, misaligned
    ("softmax", "bfloat16", (300, 20000), "contig", None, None),
    ("softmax", "float16", (300, 50257), "contig", None, None),
    ("rms_norm_residual", "bfloat16", (9, 197), "contig", None, None),
    ("layer_norm", "float32", (5, 1002), "rowstride", None, None),
]
CASES += SHIFTED
# the lanes layout (perf-notes r63), selected by ``lanes``: softmax on 8 lanes a row (a block's
# last rows past the rows there are), 16 and 32, rows of one element, misaligned rows in place;
# rms_norm with and without a residual; layer_norm
LANES = [
    ("softmax", "bfloat16", (37, 200), "contig", None, None),
    ("softmax", "float32", (19, 197), "contig", None, None),
    ("softmax", "float16", (9, 500), "contig", None, "lanes16"),
    ("softmax", "bfloat16", (5, 1000), "rowstride", None, None),
    ("softmax", "float32", (7, 1), "contig", None, "lanes8w"),
    ("rms_norm", "bfloat16", (37, 200), "contig", None, None),
    ("rms_norm_residual", "float16", (9, 768), "contig", None, None),
    ("rms_norm_residual", "float32", (5, 300), "contig", None, "lanes16"),
    ("layer_norm", "bfloat16", (37, 200), "contig", None, None),
    ("layer_norm", "float32", (9, 1000), "contig", None, None),
    # session 53 (r65): layer_norm's two-pass moments, 16-bit rows of 768 and float32 rows
    # of 200 as the automatic choice, 8 lanes of 4 groups, 32 of 4 in a row stride
    ("layer_norm", "float16", (9, 768), "contig", None, None),
    ("layer_norm", "float32", (7, 200), "contig", None, None),
    ("layer_norm", "bfloat16", (5, 100), "contig", None, "lanes8"),
    ("layer_norm", "bfloat16", (11, 1024), "rowstride", None, "lanes32"),
]
CASES += LANES

rng = np.random.default_rng()
fails = []
sel, _, sel_op = (sys.argv[1] if len(sys.argv) > 1 else "").partition(":")
cases = [c for c in CASES if not sel or c[0] == sel or
         (sel == "regs" and (c[5] or "").startswith("regs")) or
         (sel == "warps" and c in WARPS) or (sel == "narrow" and c in NARROW) or
         (sel == "shifted" and c in SHIFTED) or
         (sel == "lanes" and c in LANES and sel_op in ("", c[0]))]
if not cases:
    sys.exit(f"sanitize_rows: no cases selected by {sys.argv[1]!r}")
for case in cases:
    fails += run_case(case, rng, "cupy")
print("\n".join(fails) or f"{len(cases)} cases ok")
sys.exit(1 if fails else 0)
