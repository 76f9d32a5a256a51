"""The real row kernels, run by numba's simulator, against float64 NumPy references.

One child interpreter runs the whole table (the simulator must be enabled before numba.cuda
is imported); every layout, the three variants forced, odd sizes, non-finite values.
"""
import itertools
import json

import pytest

from .simrun import run_simulated, simulated_result

OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu", "swiglu_packed")
DTYPES = ("float32", "bfloat16", "float16")

# (op, dtype, shape, layout, special, variant): every op x dtype at a default layout, plus
# layouts, variants and values where they differ in what they exercise
CASES = [(op, dt, (3, 40), "contig", None, None) for op, dt in itertools.product(OPS, DTYPES)]
CASES += [(op, dt, shape, lay, None, var) for op, dt, (shape, lay, var) in itertools.product(
    ("rms_norm_residual", "layer_norm", "softmax", "swiglu_packed"), ("bfloat16", "float32"), [
        ((2, 300), "rowstride", "block"),  # 16-bit rows of 303: scalar path, block layout
        ((2, 2, 70), "misaligned", None),  # 3-D, unaligned start
        ((5, 6), "transposed", "warp"),  # copied once
        ((2, 700), "contig", "split"),  # 22 chunks of 32 threads: both passes
        ((1, 2), "contig", "split"),  # one chunk of a split layout
    ])]
CASES += [("softmax", "float32", (4, 90), "contig", "nonfinite", v)
          for v in (None, "split", "split2p")]
# softmax's split rows staged whole (perf-notes r62: what "split" takes now where shared
# memory holds the row) and in two passes ("split2p"): chunks of 1024, a misaligned row's
# head in chunk 0 and an empty last chunk, values near float32's limit
CASES += [("softmax", dt, shape, "contig", sp, v) for v in ("split", "split2p")
          for dt, shape, sp in (("bfloat16", (8, 2045), None), ("float32", (3, 2500), "huge"),
                                ("float16", (3, 3001), "nonfinite"))]
CASES += [("layer_norm", "float32", (4, 90), "contig", "nonfinite", "split"),
          ("rms_norm", "bfloat16", (4, 90), "contig", "nonfinite", None),
          ("swiglu", "float16", (4, 90), "contig", "nonfinite", None),
          ("softmax", "float16", (3, 50), "contig", "big", None),
          ("softmax", "bfloat16", (2, 600), "contig", "big", "split"),
          # values near float32's limit and near 1e4 with O(1) spreads: exp(x - max) must be
          # formed exactly, on whole rows and split ones (perf-notes r26: a folded max failed)
          ("softmax", "float32", (3, 300), "contig", "huge", "block"),
          ("softmax", "float32", (3, 1000), "contig", "near1e4", "loop2"),
          # rms_norm's 64-element build (16 bits, no residual): whole rows of 8192 on 128
          # threads, a partial thread, a loop of two buffers, a split row, a scalar path
          ("rms_norm", "bfloat16", (2, 8192), "contig", None, "wide"),
          ("rms_norm", "float16", (3, 5000), "contig", None, "wide"),
          ("rms_norm", "bfloat16", (5, 3000), "contig", None, "wideloop"),
          ("rms_norm", "bfloat16", (2, 9000), "contig", None, "widesplit"),
          ("rms_norm", "float16", (2, 4999), "rowstride", None, "wide"),
          ("softmax", "float32", (2, 700), "contig", "near1e4", "split"),
          ("softmax", "bfloat16", (3, 70), "contig", "huge", None),
          ("softmax", "float32", (3, 700), "contig", "huge", "split"),
          ("layer_norm", "bfloat16", (3, 64), "contig", "equal", None),
          ("rms_norm", "float16", (1, 1), "contig", None, None),
          ("softmax", "float32", (0, 8), "contig", None, None),
          ("layer_norm", "float32", (7,), "contig", None, None)]

# blocks looping over rows: 7 rows on 2 blocks (two buffers: the next row in flight), 5 on 3
# (one buffer), 9 on 2 blocks of 2 warps (groups with unequal row counts), a single row, one
# block for all rows, swiglu's chunks on 2 blocks, odd layouts and values inside the loop
LOOP_CASES = [(op, dt, (7, 300), "contig", None, "loop2")
              for op, dt in itertools.product(OPS, ("bfloat16", "float32"))]
LOOP_CASES += [(op, "float16", (5, 100), "contig", None, "loop1") for op in OPS]
# 16-bit layer_norm with float32 vectors: two row groups a block share them (perf-notes r35),
# an odd row count (the last round's second group idle), whole and partial rows; the bias
# in x's dtype (each group its own vectors) beside it
LOOP_CASES += [("layer_norm", "bfloat16", (7, 300), "contig", "vecs32", "loop2"),
               ("layer_norm", "float16", (5, 128), "contig", "vecs32", "loop1"),
               ("layer_norm", "bfloat16", (7, 130), "contig", "vecs32", "pairs"),
               ("layer_norm", "bfloat16", (3, 64), "contig", "vecs32", None),
               ("layer_norm", "float16", (7, 300), "contig", "bias16", "loop2")]
# blocks of two rows, the last block one (perf-notes r18)
LOOP_CASES += [("rms_norm", "bfloat16", (7, 300), "contig", None, "pairs"),
               ("layer_norm", "float32", (7, 130), "rowstride", None, "pairs")]
LOOP_CASES += [(op, "bfloat16", (9, 40), "contig", None, "warploop") for op in OPS]
LOOP_CASES += [("rms_norm", "float32", (1, 64), "contig", None, "loop2"),
               ("softmax", "bfloat16", (4, 1000), "contig", "big", "oneblock"),
               ("swiglu", "float32", (3, 2500), "contig", None, "splitloop"),
               ("swiglu_packed", "bfloat16", (2, 3000), "contig", None, "splitloop"),
               ("layer_norm", "bfloat16", (6, 70), "rowstride", None, "loop2"),
               ("rms_norm_residual", "float16", (5, 72), "misaligned", None, "loop1"),
               ("softmax", "float32", (4, 90), "contig", "nonfinite", "loop2"),
               ("layer_norm", "float32", (4, 90), "contig", "nonfinite", "loop2"),
               ("layer_norm", "bfloat16", (5, 64), "contig", "equal", "loop1"),
               ("layer_norm", "float32", (5, 64), "contig", "equal", "warploop")]
# a ring of 4 buffers: 11 rows on 2 blocks (3 rows in flight, then the ring's tail of empty
# groups), 3 rows on 2 blocks (fewer rows than the ring is deep), 9 rows on one block of two
# warp groups (unequal counts); layer_norm is built for a ring of 2 (nbk_max_buffers): asked
# for 4, it runs 2
LOOP_CASES += [(op, "bfloat16", (11, 300), "contig", None, "loop4") for op in OPS]
LOOP_CASES += [("layer_norm", "float32", (3, 200), "contig", "equal", "loop4"),
               ("softmax", "float16", (9, 40), "contig", "big", "warploop4"),
               ("layer_norm", "bfloat16", (9, 64), "rowstride", None, "warploop4"),
               ("rms_norm_residual", "float32", (11, 64), "misaligned", None, "loop4")]
CASES += LOOP_CASES
# rows that fill no power of two of threads take the fewest whole warps (perf-notes r47):
# float32 rows of 3072 on 96 threads, 16-bit ones of 2500 on 96 (the last thread partial);
# a forced block of three warps looping, where 16-bit layer_norm's two groups a block share
# the vectors on named barriers of 96 threads
CASES += [("layer_norm", "float32", (2, 3072), "contig", "equal", None),
          ("softmax", "float32", (2, 3072), "contig", "big", None),
          ("rms_norm_residual", "bfloat16", (3, 2500), "contig", None, None),
          ("swiglu", "float16", (2, 2500), "contig", None, None),
          ("layer_norm", "bfloat16", (5, 300), "contig", "vecs32", "block96loop"),
          ("softmax", "float16", (5, 300), "contig", None, "block96loop")]

# rows that fill every thread's 32 elements (the unmasked path each thread takes when none of
# its elements lie past the row's end), and rows a few short of it (full and partial threads
# in one group): warp, block, looping and split layouts, non-finite and equal values
FULL_CASES = [(op, dt, (2, 1024), "contig", None, "warp")
              for op, dt in itertools.product(OPS, ("bfloat16", "float32"))]
FULL_CASES += [("layer_norm", "float16", (3, 2048), "contig", None, "loop2"),
               ("layer_norm", "bfloat16", (2, 2040), "contig", None, "block"),
               ("layer_norm", "bfloat16", (2, 2048), "contig", None, "split"),
               ("layer_norm", "float32", (3, 1024), "contig", "equal", "warploop"),
               ("softmax", "float16", (3, 2048), "contig", "big", "loop1"),
               ("softmax", "bfloat16", (2, 2048), "contig", None, "split"),
               ("softmax", "float32", (4, 1024), "contig", "nonfinite", "warp"),
               ("rms_norm", "float16", (2, 2044), "contig", None, "loop2"),
               ("rms_norm_residual", "bfloat16", (3, 2048), "contig", None, "loop2"),
               ("rms_norm_residual", "float16", (2, 2048), "contig", None, "split"),
               ("swiglu", "float16", (3, 2048), "contig", "nonfinite", "loop2"),
               ("swiglu_packed", "float32", (2, 2048), "contig", None, "splitloop")]
# one element either side of a full row (n == G * 32), each op: the last thread of a group
# partial beside full ones (1023 on a warp; 2047 on 64 threads with a ring of two), a split
# row whose last chunk holds one element (2049 in chunks of 1024), and 1025 on the 64 threads
# the default layout picks (the threads past the end partial or empty); swiglu_packed's
# last axis holds gate and up
EDGE = [((2, 1023), "bfloat16", "warp"), ((3, 2047), "float32", "loop2"),
        ((2, 2049), "bfloat16", "split"), ((2, 1025), "float32", None)]
FULL_CASES += [(op, dt, (s[0], 2 * s[1]) if op == "swiglu_packed" else s, "contig", None, var)
               for op in OPS for s, dt, var in EDGE]
# layer_norm's 16-bit kernels hold 64 elements a thread (nbk_per_thread): a full warp row is
# 2048, a full 64-thread one 4096; one short of that, and a split row of 2048-element chunks
# whose last chunk holds one element
FULL_CASES += [("layer_norm", "bfloat16", (2, 2048), "contig", None, "warp"),
               ("layer_norm", "float16", (2, 4096), "contig", "equal", "loop2"),
               ("layer_norm", "bfloat16", (3, 4095), "contig", None, "loop2"),
               ("layer_norm", "bfloat16", (2, 4097), "contig", None, "split")]
# layer_norm rows on several warps exchange each warp's statistics at one barrier
# (perf-notes r16): whole rows (each warp's count a power of two), partial ones (counts
# summed), a mean far from zero; softmax with a warp whose elements are all -inf beside a
# finite one (its outputs 0, not NaN)
FULL_CASES += [("layer_norm", "bfloat16", (3, 4096), "contig", None, "loop2"),
               ("layer_norm", "float32", (3, 2048), "contig", "offset", "loop2"),
               ("layer_norm", "float16", (2, 1500), "contig", "offset", "block"),
               # one pass of sums a thread around its first element (perf-notes r29): that
               # element far from the rest, on whole rows and partial ones
               ("layer_norm", "float32", (3, 2048), "contig", "firsts", "loop2"),
               ("layer_norm", "bfloat16", (2, 4096), "contig", "firsts", "loop2"),
               ("layer_norm", "float32", (2, 1000), "contig", "firsts", "block"),
               ("softmax", "float32", (3, 2048), "contig", "warpinf", "loop2"),
               ("softmax", "float32", (2, 1000), "contig", "warpinf", "block"),
               ("softmax", "bfloat16", (2, 2048), "contig", "big", "oneblock")]
CASES += FULL_CASES

# the register-row layout (perf-notes r43; 16-bit layer_norm, softmax and rms_norm without a
# residual): whole rows of 8192 on 128 threads of 64 elements, partial threads (4097: one
# element past 4096; 5000), rows of a stride and a padded copy, one warp a row (no block
# barrier), and the values each op's statistics must survive
REGS_CASES = [(op, dt, (2, 8192), "contig", None, "regs")
              for op in ("rms_norm", "layer_norm", "softmax") for dt in ("bfloat16", "float16")]
REGS_CASES += [("layer_norm", "bfloat16", (3, 4097), "contig", "firsts", "regs"),
               ("layer_norm", "bfloat16", (2, 3000), "contig", "offset", "regs"),
               ("layer_norm", "float16", (3, 64), "contig", "equal", "regs32"),
               ("layer_norm", "float16", (4, 90), "contig", "nonfinite", "regs64"),
               ("layer_norm", "bfloat16", (2, 300), "rowstride", None, "regs64"),
               ("softmax", "float16", (3, 5000), "contig", "big", "regs"),
               ("softmax", "float16", (2, 1000), "contig", "warpinf", "regs"),
               ("softmax", "bfloat16", (3, 300), "contig", "huge", "regs64"),
               ("softmax", "bfloat16", (4, 90), "contig", "nonfinite", "regs32"),
               ("softmax", "float16", (2, 2, 70), "misaligned", None, "regs64"),
               ("rms_norm", "bfloat16", (4, 90), "contig", "nonfinite", "regs32"),
               ("rms_norm", "float16", (3, 4999), "rowstride", None, "regs"),
               ("rms_norm", "bfloat16", (1, 1), "contig", None, "regs32")]
# as the automatic choice takes it (env NBKERNELS_ROW_VARIANT=regs): rows that fill whole warps
# of 32-element threads (5120 on 160, 3072 on 96, 6144 on 192, 4096 on 128), and
# rows that fill none (4100 and 5000: 160 threads of 32, the last ones partial or idle; r47)
REGS_CASES += [(op, dt, (2, n), "contig", sp, "regsauto")
               for op, dt, n, sp in (("layer_norm", "bfloat16", 5120, "firsts"),
                                     ("softmax", "float16", 5120, "big"),
                                     ("rms_norm", "bfloat16", 5120, None),
                                     ("layer_norm", "float16", 6144, "offset"),
                                     ("softmax", "bfloat16", 3072, "nonfinite"),
                                     ("rms_norm", "float16", 4100, None),
                                     ("layer_norm", "bfloat16", 5000, "firsts"),
                                     ("layer_norm", "bfloat16", 2500, "firsts"),
                                     ("softmax", "float16", 4096, None))]
CASES += REGS_CASES

# softmax's lanes layout (perf-notes r63): several rows a warp, each loaded into registers, the
# slots past a row -inf. Rows that end in a different group on each lane (200 on 8 lanes of 32:
# 25 of 32 groups), rows within one group (13) and of one element, a block's last rows past the
# rows there are (37 rows on blocks of 16), every special value, rows of a stride and in a
# padded copy; as the automatic choice takes them: misaligned rows in place (197: a head of 0-7
# elements a row), 64 on 8 lanes of 8, 500 on 16 of 32, 1000 on 32 of 32, float32 197 on 16
LANES_CASES = [("softmax", dt, s, "contig", sp, var) for dt in DTYPES
               for s, sp, var in (((37, 200), None, "lanes8"), ((5, 13), "nonfinite", "lanes8"),
                                  ((3, 1), None, "lanes8w"), ((6, 300), "huge", "lanes16"),
                                  ((4, 1000), "big", "lanes32"), ((9, 64), "equal", "lanes8"))]
LANES_CASES += [("softmax", dt, s, lay, sp, var)
                for dt, s, lay, sp, var in (("bfloat16", (5, 70), "rowstride", "nonfinite",
                                             "lanes8"),
                                            ("float16", (2, 3, 90), "misaligned", None, "lanes16"),
                                            ("float32", (7, 100), "contig", "warpinf", "lanes8w"),
                                            ("bfloat16", (3, 130), "contig", "near1e4", "lanes8"))]
LANES_CASES += [("softmax", dt, (s0, n), lay, sp, "lanesauto")
                for dt, s0, n, lay, sp in (("bfloat16", 19, 197, "contig", "nonfinite"),
                                           ("float16", 5, 197, "contig", "big"),
                                           ("float32", 19, 197, "contig", None),
                                           ("bfloat16", 33, 64, "contig", "equal"),
                                           ("float16", 3, 500, "rowstride", None),
                                           ("bfloat16", 2, 1000, "contig", "huge"),
                                           ("float32", 3, 1000, "misaligned", "nonfinite"))]
# rms_norm's (r63): with and without a residual, every lane count, as the automatic choice
# takes it (a padded copy for misaligned rows: rms_norm has no shifted build)
LANES_CASES += [(op, dt, s, lay, sp, var) for op in ("rms_norm", "rms_norm_residual")
                for dt, s, lay, sp, var in (("bfloat16", (37, 200), "contig", None, "lanes8"),
                                            ("float32", (6, 300), "contig", "nonfinite",
                                             "lanes16"),
                                            ("float16", (4, 1000), "rowstride", None, "lanes32"),
                                            ("bfloat16", (5, 13), "contig", "big", "lanes8w"),
                                            ("float32", (19, 197), "contig", None, "lanesauto"),
                                            ("float16", (2, 3, 90), "misaligned", None,
                                             "lanesauto"))]
# layer_norm's (r64, r65): the values its two-pass moments must survive (a far first element, a
# mean far from the spread, equal rows, non-finite values), every lane count, as the automatic
# choice
LANES_CASES += [("layer_norm", dt, s, lay, sp, var)
                for dt, s, lay, sp, var in (("bfloat16", (37, 200), "contig", "firsts", "lanes8"),
                                            ("float32", (6, 300), "contig", "offset", "lanes16"),
                                            ("float16", (4, 1000), "rowstride", None, "lanes32"),
                                            ("bfloat16", (5, 13), "contig", "equal", "lanes8w"),
                                            ("float32", (19, 197), "contig", "nonfinite",
                                             "lanesauto"),
                                            ("float16", (2, 3, 90), "misaligned", "firsts",
                                             "lanesauto"),
                                            ("float32", (9, 64), "contig", "equal", "lanesauto"),
                                            ("bfloat16", (3, 1), "contig", None, "lanesauto"),
                                            # r65: 8 lanes of 4 groups (16-bit rows of 200),
                                            # 32 of 4 with partial groups in a row stride
                                            ("bfloat16", (9, 200), "contig", "firsts",
                                             "lanesauto"),
                                            ("float16", (3, 1020), "rowstride", "offset",
                                             "lanesauto"))]
CASES += LANES_CASES

# rows in the warp layout on builds of as many slot groups a lane as they need (perf-notes r54):
# rows of 768 on 24 elements a lane in every op and dtype (every lane full; 16-bit layer_norm's
# build held 64); 16-bit layer_norm's rows of 1536 and 1792 (6 and 7 groups: its write loops of
# 4 and the rest), 1000 on 40 (every lane masked; at 32 three lanes would be, beside full
# ones: r56), the float32 vectors its four warps share; 257 on 16, 100 on 8 (float32)
NARROW_CASES = [(op, dt, (3, 768), "contig", None, None)
                for op in ("rms_norm", "rms_norm_residual", "layer_norm", "softmax")
                for dt in DTYPES]
NARROW_CASES += [("layer_norm", "float16", (2, 1536), "contig", "firsts", None),
                 ("layer_norm", "bfloat16", (5, 1792), "contig", "nonfinite", None),
                 ("layer_norm", "bfloat16", (3, 1000), "contig", "equal", None),
                 ("layer_norm", "bfloat16", (9, 768), "contig", "vecs32", None),
                 ("layer_norm", "float32", (3, 768), "contig", "offset", None),
                 ("softmax", "bfloat16", (3, 500), "contig", "big", None),
                 ("softmax", "float16", (3, 768), "contig", "warpinf", None),
                 ("rms_norm", "float16", (3, 257), "rowstride", None, None),
                 ("softmax", "float32", (3, 100), "contig", "nonfinite", None)]
# and on a block of 64 threads (r55): 16-bit rows of 1536 on 24 a thread (whole), 1100 (the
# second warp's last group idle); float32 rows of 1280 on 20 (five groups); 16-bit
# layer_norm's staged rows of 3000 on 48 (its two warps exchange; far-off firsts), 2500 on 40,
# and two row groups a block sharing the float32 vectors on named barriers
NARROW_CASES += [("softmax", "bfloat16", (3, 1536), "contig", "big", None),
                 ("rms_norm_residual", "float16", (3, 1100), "contig", None, None),
                 ("rms_norm", "bfloat16", (2, 1536), "rowstride", None, None),
                 ("layer_norm", "float32", (3, 1280), "contig", "offset", None),
                 ("layer_norm", "bfloat16", (3, 3000), "contig", "firsts", None),
                 ("layer_norm", "float16", (2, 2500), "contig", "equal", None),
                 ("layer_norm", "bfloat16", (7, 3000), "contig", "vecs32", None),
                 ("softmax", "float32", (3, 1280), "contig", "warpinf", None)]
CASES += NARROW_CASES

# Turing's path (no cp.async: rows staged through registers; bf16 rounded in integer code)
SM75_CASES = [(op, dt, (3, 300), "contig", None, var)
              for op in ("rms_norm_residual", "layer_norm", "softmax", "swiglu")
              for dt in ("bfloat16", "float16") for var in (None, "split")]
SM75_CASES += [("softmax", "bfloat16", (3, 50), "contig", "nonfinite", None),
               ("layer_norm", "bfloat16", (5, 300), "contig", None, "loop2"),
               ("rms_norm_residual", "float16", (7, 100), "contig", None, "loop1"),
               ("swiglu", "bfloat16", (5, 100), "contig", None, "warploop"),
               # full rows: layer_norm's write loops (two of 2 groups on Turing)
               ("layer_norm", "bfloat16", (3, 1024), "contig", None, "warp"),
               ("layer_norm", "float32", (3, 2047), "contig", None, "loop2"),
               # the narrow rows' builds (24 and 16 elements a lane; 32 for layer_norm there)
               ("layer_norm", "bfloat16", (3, 768), "contig", None, None),
               ("softmax", "float16", (3, 500), "contig", None, None),
               ("rms_norm_residual", "bfloat16", (3, 768), "contig", None, None)]

SCRIPT = r'''
import contextlib, json, sys
import numpy as np
sys.path.insert(0, "tests")
from row_cases import run_case
from nbkernels.arch import Arch
from nbkernels.rows import host
rng = np.random.default_rng()
fails = []
target = host.target_arch(Arch.parse(sys.argv[2])) if len(sys.argv) > 2 else \
    contextlib.nullcontext()
with target:
    for case in json.loads(sys.argv[1]):
        try:
            fails += run_case(tuple(case[:2]) + (tuple(case[2]),) + tuple(case[3:]), rng)
        except Exception as e:
            fails.append(f"{case}: {type(e).__name__}: {e}")
print("RESULT " + json.dumps(fails))
'''


@pytest.mark.parametrize("chunk", range(3))
def test_row_kernels_in_simulator(chunk):
    cases = CASES[chunk::3]
    proc = run_simulated(["-c", SCRIPT, json.dumps(cases)])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])


def test_turing_path_in_simulator():
    proc = run_simulated(["-c", SCRIPT, json.dumps(SM75_CASES), "sm_75"])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])


NARROW = r'''
import json, os, sys
import numpy as np
sys.path.insert(0, "tests")
from row_cases import run_case
from nbkernels.rows import RowConfig, layer_norm_kernel as L, rms_norm_kernel as R
from nbkernels.rows import softmax_kernel as S
seen = []
for mod in (L, S, R):
    def spy(*a, _build=mod.build, **k):
        seen.append(a[-1] if len(a) in (3, 5, 7) else a[2] if len(a) == 4 else None)
        return _build(*a, **k)
    mod.build = spy
rng = np.random.default_rng()
got = []
for op, dt, n, var, env in json.loads(sys.argv[1]):
    seen.clear()
    if env:
        os.environ["NBKERNELS_ROW_VARIANT"] = env
    fails = run_case((op, dt, (2, n), "contig", None, var), rng, with_out=False)
    os.environ.pop("NBKERNELS_ROW_VARIANT", None)
    got.append([sorted(set(seen), key=str), fails])
print("RESULT " + json.dumps(got))
'''


def test_narrow_rows_take_the_build_of_the_slot_groups_they_need():
    """Which build a call runs (the elements a thread each op's build was asked for): rows on
    a warp or a 64-thread block by themselves take as many slot groups a thread as they need;
    a forced layout (config or NBKERNELS_ROW_VARIANT) keeps the op's own build; rows on more
    threads keep it."""
    table = [  # op, dtype, n, variant, env -> elements a lane
        ("layer_norm", "bfloat16", 768, None, None, 24),
        ("layer_norm", "float16", 1536, None, None, 48),
        ("layer_norm", "float32", 768, None, None, 24),
        ("softmax", "bfloat16", 500, None, None, 24),  # at 16, 30 lanes full (r56)
        ("rms_norm", "float32", 100, None, None, 8),
        ("rms_norm_residual", "float16", 768, None, None, 24),
        ("layer_norm", "bfloat16", 2048, None, None, 64),  # a whole warp of the op's own
        ("softmax", "bfloat16", 1536, None, None, 24),  # a block of 64 threads (r55)
        ("softmax", "bfloat16", 1025, None, None, 32),  # misaligned: planned for 1032 (r59)
        ("layer_norm", "bfloat16", 3000, None, None, 56),  # staged (no register rows here)
        ("layer_norm", "float32", 1280, None, None, 20),
        ("softmax", "bfloat16", 2049, None, None, 32),  # 96 threads: the op's own
        ("layer_norm", "bfloat16", 768, "warp", None, 64),  # forced: the op's own build
        ("softmax", "float16", 768, None, "warp", 32),
    ]
    res = simulated_result(["-c", NARROW, json.dumps([t[:5] for t in table])])
    for (op, dt, n, var, env, want), (seen, fails) in zip(table, res):
        assert not fails, fails
        assert seen == [want], (op, dt, n, var, env, seen)


PADCOPY = r'''
import json
import numpy as np
from nbkernels import arrays
from nbkernels.rows import padcopy
rng = np.random.default_rng()
fails = []
# (rows, n, dtype, the source's extra columns and offset, the destination's padding): 2-byte
# units (a 16-bit row of odd bytes, one element off a 4-byte boundary), 4-byte units (float32,
# and 16-bit rows whose starts and pitches are 4-byte multiples), one row, more rows than
# a block's 16 and a grid row's, one element
for rows, n, dt, extra, off, pad in [(37, 197, np.uint16, 3, 1, 3), (5, 2500, np.uint16, 4, 2, 4),
                                     (3, 1, np.uint16, 2, 1, 7), (20, 33, np.float32, 3, 1, 3),
                                     (1, 4099, np.uint16, 1, 1, 5), (40, 6, np.uint16, 0, 0, 2)]:
    src_full = rng.integers(1, 60000, (rows, n + extra)).astype(dt)
    src = src_full[:, off:off + n]
    dst_full = np.full((rows, n + pad), 7, dt)
    dst, before, src_before = dst_full[:, :n], dst_full.copy(), src_full.copy()
    es = src.itemsize
    padcopy.copy_rows(arrays.as_view(dst, "d"), arrays.as_view(src, "s"), rows, n * es,
                      dst_full.shape[1] * es, src_full.shape[1] * es, 0, None)
    want = before.copy()
    padcopy.copy_rows_ref(want[:, :n], src)
    if not (np.array_equal(dst_full, want) and np.array_equal(src_full, src_before)):
        fails.append([rows, n, str(np.dtype(dt))])
print("RESULT " + json.dumps(fails))
'''


def test_padded_rows_copy_kernel_in_simulator():
    """rows/padcopy.py's kernel (the misaligned rows' copies, perf-notes r58): every element
    of each row copied, the destination's padding and the source untouched, in 2- and 4-byte
    units."""
    assert simulated_result(["-c", PADCOPY]) == []


IN_PLACE = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
import nbkernels as nbk
from nbkernels.rows import RowConfig, rms_norm_ref, softmax_ref, swiglu_ref
from row_cases import mismatch
import ml_dtypes
rng = np.random.default_rng()
fails = []
def nbk_np(a, dt):
    return a.astype(ml_dtypes.bfloat16 if dt == "bfloat16" else np.float16)
for cfg in (RowConfig("block", 64, blocks=2, buffers=2),
            RowConfig("block", 64, blocks=2, buffers=1),
            RowConfig("warp", 32, 2, blocks=2, buffers=2)):
    x = rng.standard_normal((7, 96)).astype(np.float32)
    r = rng.standard_normal((7, 96)).astype(np.float32)
    w = rng.standard_normal(96).astype(np.float32)
    want_y, want_h = rms_norm_ref(x, w, residual=r)
    res = nbk.rms_norm(x, w, residual=r, out=x, residual_out=r, config=cfg)
    if res.out is not x or res.residual is not r:
        fails.append(f"{cfg}: in-place results are not the arrays passed")
    fails += [m for m in (mismatch(f"{cfg} y", x, want_y, "float32"),
                          mismatch(f"{cfg} h", r, want_h.astype(np.float64), "float32")) if m]
    x = rng.standard_normal((7, 96)).astype(np.float32)
    want = softmax_ref(x)
    nbk.softmax(x, out=x, config=cfg)
    fails += [m for m in (mismatch(f"{cfg} softmax", x, want, "float32"),) if m]
    g = rng.standard_normal((7, 96)).astype(np.float32)
    u = rng.standard_normal((7, 96)).astype(np.float32)
    want = swiglu_ref(g, u)
    nbk.swiglu(g, u, out=u, config=cfg)
    fails += [m for m in (mismatch(f"{cfg} swiglu", u, want, "float32"),) if m]
# the register-row layout: out=x without a copy (each thread writes only the elements it
# read, after reading them)
for dt in ("bfloat16", "float16"):
    x = nbk_np(rng.standard_normal((3, 5000)), dt)
    want = softmax_ref(x)
    nbk.softmax(x, out=x, config=RowConfig("regs", 128))
    fails += [m for m in (mismatch(f"regs softmax {dt}", x, want, dt),) if m]
    x = nbk_np(rng.standard_normal((3, 5000)), dt)
    w = nbk_np(rng.standard_normal(5000), dt)
    want = rms_norm_ref(x, w)
    nbk.rms_norm(x, w, out=x, config=RowConfig("regs", 128))
    fails += [m for m in (mismatch(f"regs rms_norm {dt}", x, want, dt),) if m]
print("RESULT " + json.dumps(fails))
'''


SHIFTED = r'''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
import nbkernels as nbk
from nbkernels.rows import (RowConfig, layer_norm_ref, rms_norm_ref, softmax_ref,
                            swiglu_ref)
from nbkernels.rows import host
from row_cases import mismatch
rng = np.random.default_rng()
fails, temps = [], []
finish = host.Call.finish
def spy(self, *outs):  # whether the results were computed aside and copied into out
    temps.append(any(r.temp for r in outs))
    return finish(self, *outs)
host.Call.finish = spy
N = 40
for cfg in (RowConfig("block", 32, blocks=2, buffers=2),):  # blocks loop: row i+1 in flight
    for op in ("rms_norm", "layer_norm", "softmax", "swiglu"):
        for shift in (1, -1):  # out = buf[1:] for x = buf[:-1], and the other way round
            buf = rng.standard_normal((6, N)).astype(np.float32)
            w = rng.standard_normal(N).astype(np.float32)
            x, out = (buf[:-1], buf[1:]) if shift == 1 else (buf[1:], buf[:-1])
            keep = buf[0 if shift == 1 else -1].copy()
            xs = x.copy()
            if op == "rms_norm":
                want, got = rms_norm_ref(xs, w), nbk.rms_norm(x, w, out=out, config=cfg)
            elif op == "layer_norm":
                want = layer_norm_ref(xs, w, w)
                got = nbk.layer_norm(x, w, w, out=out, config=cfg)
            elif op == "softmax":
                want, got = softmax_ref(xs), nbk.softmax(x, out=out, config=cfg)
            else:
                u = rng.standard_normal(x.shape).astype(np.float32)
                want, got = swiglu_ref(xs, u), nbk.swiglu(x, u, out=out, config=cfg)
            label = f"{cfg} {op} shift {shift}"
            if got is not out or temps[-1] is not True:
                fails.append(f"{label}: the result is not out, or was not computed aside")
            fails += [m for m in (mismatch(label, out, want, "float32"),) if m]
            if not np.array_equal(buf[0 if shift == 1 else -1], keep):
                fails.append(f"{label}: the row outside out changed")
    # a weight inside out's rows, and swiglu's packed halves with out on the gate half
    buf = rng.standard_normal((6, N)).astype(np.float32)
    x = rng.standard_normal((5, N)).astype(np.float32)
    w = buf[3].copy()
    want = rms_norm_ref(x, w)
    nbk.rms_norm(x, buf[3], out=buf[1:], config=cfg)
    fails += [m for m in (mismatch(f"{cfg} weight inside out", buf[1:], want, "float32"),)
              if m]
    if not temps[-1]:
        fails.append("weight inside out: not computed aside")
    gu = rng.standard_normal((5, 2 * N)).astype(np.float32)
    want = swiglu_ref(gu[:, :N], gu[:, N:])
    nbk.swiglu(gu, out=gu[:, :N], config=cfg)  # element for element: in place, no copy
    fails += [m for m in (mismatch(f"{cfg} packed, out on the gate half", gu[:, :N], want,
                                   "float32"),) if m]
    if temps[-1]:
        fails.append("packed swiglu, out on the gate half: computed aside, expected in place")
print("RESULT " + json.dumps(fails))
'''


def test_out_overlapping_an_input_shifted_by_rows():
    """out=x[1:] for x[:-1] (and back), a weight inside out, out on the gate half of a packed
    swiglu: each result as if computed out of place."""
    proc = run_simulated(["-c", SHIFTED])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])


def test_in_place_with_blocks_looping_over_rows():
    """out=x and residual_out=residual while a block's next row is already in flight."""
    proc = run_simulated(["-c", IN_PLACE])
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    fails = json.loads(line[0][7:])
    assert not fails, "\n".join(fails[:20])


MISALIGNED = r'''
import json, os, sys
import numpy as np
sys.path.insert(0, "tests")
import nbkernels as nbk
from nbkernels.rows import RowConfig, host, softmax_kernel as S, softmax_ref
from row_cases import DTYPES, mismatch
rng = np.random.default_rng()
seen, pads = [], []
build, padded = S.build, host._padded
def spy_build(*a, **k):
    seen.append(bool(a[3]) if len(a) > 3 else False)
    return build(*a, **k)
def spy_padded(*a, **k):
    pads.append(1)
    return padded(*a, **k)
S.build, host._padded = spy_build, spy_padded
def rows_in(buf, lay, shape):
    """A view of ``buf`` laid out as ``lay``: its rows, and a mask of buf's other elements."""
    rows, n = shape
    if lay == "contig":
        v = buf[: rows * n].reshape(shape)
    elif lay == "base1":  # one element into the buffer: every row's start shifts by one
        v = buf[1: 1 + rows * n].reshape(shape)
    else:  # "stride3": rows of n + 3 elements apart
        v = buf[: rows * (n + 3)].reshape(rows, n + 3)[:, :n]
    first = (v.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) \
        // buf.itemsize
    inside = np.zeros(buf.size, bool)
    inside[first + np.arange(rows)[:, None] * (v.strides[0] // buf.itemsize)
           + np.arange(n)[None, :]] = True
    return v, ~inside
res = []
for dt, shape, xlay, olay, var, env in json.loads(sys.argv[1]):
    seen.clear(); pads.clear()
    d = DTYPES[dt]
    size = shape[0] * (shape[1] + 3) + 1
    xbuf = (rng.standard_normal(size) * 3).astype(d)
    x, _ = rows_in(xbuf, xlay, shape)
    want = softmax_ref(x.copy())
    if olay == "inplace":
        out, obuf, outside = x, xbuf, rows_in(xbuf, xlay, shape)[1]
    elif olay is None:
        out, obuf, outside = None, None, None
    else:
        obuf = np.full(size, np.nan, d)
        out, outside = rows_in(obuf, olay, shape)
    keep = None if obuf is None else obuf[outside].copy()
    xkeep = xbuf.copy()
    cfg = None if var is None else {"split": RowConfig("split", 32),
                                    "warp": RowConfig("warp", 32, 2)}[var]
    if env:
        os.environ["NBKERNELS_ROW_VARIANT"] = env
    try:
        got = nbk.softmax(x, out=out, config=cfg)
    finally:
        os.environ.pop("NBKERNELS_ROW_VARIANT", None)
    fails = [m for m in (mismatch(f"{dt} {shape} {xlay}/{olay} {var} {env}", got, want, dt),)
             if m]
    if out is not None and got is not out:
        fails.append("the result is not the out array passed")
    if obuf is not None and not np.array_equal(obuf[outside], keep, equal_nan=True):
        fails.append("elements of out's buffer outside its rows changed")
    if olay != "inplace" and not np.array_equal(xbuf, xkeep, equal_nan=True):
        fails.append("x changed")
    res.append([sorted(set(seen)), len(pads), fails])
print("RESULT " + json.dumps(res))
'''


def test_misaligned_softmax_rows_are_worked_on_in_place():
    """softmax on rows that do not start 16-byte aligned (odd widths, a start one element
    into the buffer, rows 3 elements apart): a shifted build reads and writes them where
    they are, with no padded copy, wherever out's rows lie as x's (a fresh result of a
    contiguous x, in place, an out laid out like x); otherwise (a fresh result beside a
    shifted start, a forced warp) the padded copies. Elements of out's buffer outside its
    rows (the rows before's, the gaps) and x itself stay as they were."""
    table = [  # dtype, shape, x's layout, out's, config, env -> shifted build, padded copies
        ("bfloat16", (8, 2045), "contig", "contig", "split", None, True, 0),  # heads 0-7;
        ("bfloat16", (9, 77), "contig", None, None, None, True, 0),  # last chunk empty at h<=3
        ("float16", (5, 197), "contig", "contig", None, "regs", True, 0),
        ("float32", (7, 37), "contig", "contig", None, None, True, 0),
        ("bfloat16", (6, 3001), "contig", "contig", None, None, True, 0),  # a block, looping
        ("float16", (5, 70), "base1", "inplace", None, None, True, 0),
        ("bfloat16", (5, 70), "base1", "base1", None, None, True, 0),
        ("float32", (6, 46), "stride3", "stride3", None, None, True, 0),
        ("bfloat16", (6, 46), "stride3", "stride3", "split", None, True, 0),
        ("bfloat16", (5, 70), "base1", None, None, None, False, 2),  # a fresh out: padded
        ("float16", (5, 70), "contig", "base1", None, None, False, 2),  # both padded
        ("bfloat16", (5, 70), "contig", "contig", "warp", None, False, 2),  # forced warp
        ("bfloat16", (5, 70), "contig", "contig", None, "warp", False, 2),
    ]
    res = simulated_result(["-c", MISALIGNED, json.dumps([t[:6] for t in table])])
    for row, (seen, pads, fails) in zip(table, res):
        assert not fails, (row, fails)
        assert (seen, pads) == ([row[6]], row[7]), (row, seen, pads)


REDUCTIONS = r'''
import json
import numpy as np
from numba import cuda, float32
from nbkernels.rows.device import MAX_WARPS, EXCHANGE_SLOTS, exchange, group_max, group_sum

@cuda.jit
def reduce(vals, sums, maxes, trip, G):
    red = cuda.shared.array((EXCHANGE_SLOTS, MAX_WARPS), float32)
    t = cuda.threadIdx.x
    v = vals[t]
    sums[t] = group_sum(v, G, red, 0)
    maxes[t] = group_max(v, G, red, 1)
    a, b, c = exchange(v, v * 2, float32(t // 32), G, red, 1, float32(7), float32(7),
                       float32(-1), 0, False)
    trip[t, 0], trip[t, 1], trip[t, 2] = a, b, c

rng = np.random.default_rng()
out = {}
for G in (64, 96, 128, 160, 224, 256, 480, 512):
    vals = rng.standard_normal(G).astype(np.float32)
    sums, maxes = np.zeros(G, np.float32), np.zeros(G, np.float32)
    trip = np.zeros((G, 3), np.float32)
    reduce[1, G](vals, sums, maxes, trip, G)
    out[G] = [vals.tolist(), sums.tolist(), maxes.tolist(), trip.tolist()]
print("RESULT" + json.dumps(out))
'''


def test_group_reductions_over_any_warp_count():
    """group_sum, group_max and exchange in groups of 2 to 16 warps, powers of two or not: every
    thread gets the group's sum (to float32 rounding) and maximum with the same bits as the
    others, and exchange hands lane l the triple warp l % 16's lane 0 posted, or the fill
    values past the group's last warp."""
    import numpy as np

    from .simrun import simulated_result

    res = simulated_result(["-c", REDUCTIONS], what="the reductions")
    for G, (vals, sums, maxes, trip) in res.items():
        G, vals, trip = int(G), np.array(vals, np.float64), np.array(trip)
        warps = G // 32
        assert len(set(sums)) == 1 and len(set(maxes)) == 1, G
        np.testing.assert_allclose(sums[0], vals.sum(), rtol=1e-5, atol=1e-5)
        assert maxes[0] == np.float32(vals.max()), G
        for t in range(G):
            k = t % 16
            if k < warps:
                lane0 = np.float32(vals[32 * k])  # what warp k's lane 0 posted
                assert list(trip[t, :3]) == [lane0, 2 * lane0, k], (G, t)
            else:
                assert list(trip[t, :3]) == [7, 7, -1], (G, t)


LANE_REDUCTIONS = r'''
import json
import numpy as np
from numba import cuda
from nbkernels.rows.device import lanes_max, lanes_sum

@cuda.jit
def reduce(vals, sums, maxes, G):
    t = cuda.threadIdx.x
    sums[t] = lanes_sum(vals[t], G, vals, 0)
    maxes[t] = lanes_max(vals[t], G, vals, 0)

rng = np.random.default_rng()
out = {}
for G in (8, 16, 32):
    vals = rng.standard_normal(64).astype(np.float32)
    sums, maxes = np.zeros(64, np.float32), np.zeros(64, np.float32)
    reduce[1, 64](vals, sums, maxes, G)
    out[G] = [vals.tolist(), sums.tolist(), maxes.tolist()]
print("RESULT" + json.dumps(out))
'''


def test_lane_reductions_stay_within_each_rows_lanes():
    """lanes_sum and lanes_max over groups of 8, 16 and 32 lanes (the lanes layout's rows, two
    warps): every lane of a group gets its group's sum (to float32 rounding) and maximum, the
    same bits in each of them, nothing from the group beside it."""
    import numpy as np

    from .simrun import simulated_result

    res = simulated_result(["-c", LANE_REDUCTIONS], what="the lane reductions")
    for G, (vals, sums, maxes) in res.items():
        G = int(G)
        for g in range(64 // G):
            part = np.array(vals[g * G:(g + 1) * G], np.float64)
            s, m = sums[g * G:(g + 1) * G], maxes[g * G:(g + 1) * G]
            assert len(set(s)) == 1 and len(set(m)) == 1, (G, g)
            np.testing.assert_allclose(s[0], part.sum(), rtol=1e-5, atol=1e-5)
            assert m[0] == np.float32(part.max()), (G, g)
