"""Row kernels on a GPU: CuPy, torch and NumPy arrays, every op x dtype, sizes up to rows of
2^20 elements, each layout and variant, repeat calls (the replay path), streams, in place."""
import itertools

import numpy as np
import pytest

from .row_cases import DTYPES, mismatch, run_case, to_numpy
from .torch_streams import replays_on_side_stream

pytestmark = pytest.mark.gpu

OPS = ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu", "swiglu_packed")
# (12000, 512): 3000 blocks of 4 rows, (3000, 4096): 3000 blocks of one; more than stay
# resident on an H200 (at most 16 blocks of 128 threads per SM: 2112), so blocks walk rows
SHAPES = [(5, 122), (1000, 1024), (130, 4096), (7, 12290), (3, 65536), (2, 1 << 20),
          (12000, 512), (3000, 4096)]
CASES = [(op, dt, s, "contig", None, None)
         for op, dt, s in itertools.product(OPS, DTYPES, SHAPES)]
CASES += [(op, dt, (37, 3000), lay, None, var)
          for op, dt, lay, var in itertools.product(
              OPS, ("bfloat16", "float32"), ("rowstride", "misaligned", "transposed"),
              (None, "split256"))]
CASES += [("softmax", dt, (64, 5000), "contig", sp, var)
          for dt, sp, var in itertools.product(DTYPES, ("big", "nonfinite"), (None, "split256"))]
CASES += [("softmax", dt, (3, 5000), "contig", sp, var)
          for dt, sp, var in itertools.product(("bfloat16", "float32"), ("huge", "near1e4"),
                                               (None, "split256"))]
CASES += [(op, "float32", (64, 3000), "contig", sp, None)
          for op, sp in itertools.product(("rms_norm", "layer_norm", "swiglu"),
                                          ("nonfinite", "equal"))]
# rows that fill no power of two of threads, on the fewest whole warps (perf-notes r47):
# float32 rows of 5120 on 160 threads, 7168 on 224, 3072 on 96, 5000 with a partial thread;
# 16-bit ones with a residual and swiglu (the staged layouts on every GPU)
CASES += [(op, "float32", s, "contig", sp, None)
          for op in ("rms_norm", "rms_norm_residual", "layer_norm", "softmax", "swiglu")
          for s, sp in (((301, 5120), None), ((37, 7168), "nonfinite"), ((64, 3072), "equal"),
                        ((37, 5000), None))]
CASES += [(op, dt, s, "contig", None, None) for op in ("rms_norm_residual", "swiglu")
          for dt in ("bfloat16", "float16") for s in ((301, 5120), (37, 5000))]
# a block of 3 warps forced, looping (16-bit layer_norm's groups sharing the vectors meet on
# named barriers of 96 threads)
CASES += [(op, "bfloat16", (301, 3000), "contig", sp, "block96loop")
          for op, sp in (("layer_norm", "vecs32"), ("softmax", None), ("rms_norm_residual", None))]
# a few blocks looping over many rows, rings of 1, 2 and 4 buffers; swiglu looping over chunks
CASES += [(op, dt, (37, 2000), "contig", None, var)  # 64-thread blocks hold 2048
          for op, dt, var in itertools.product(OPS, ("bfloat16", "float32"),
                                               ("loop1", "loop2", "loop4", "pairs"))]
CASES += [(op, "float16", (301, 1000), "contig", None, var) for op in OPS
          for var in ("warploop", "warploop4")]
CASES += [("swiglu", "bfloat16", (3, 40000), "contig", None, "splitloop")]
# rms_norm's 64-element 16-bit build: automatic for rows of 4097-8192 on the H200 (perf-notes
# r27), and forced in every layout; rows of 4096 in one-buffer pairs there
CASES += [("rms_norm", dt, s, lay, None, var)
          for dt in ("bfloat16", "float16")
          for s, lay, var in (((300, 8192), "contig", None), ((37, 5000), "contig", None),
                              ((37, 4097), "rowstride", None), ((600, 4096), "contig", None),
                              ((37, 6000), "misaligned", "wide"), ((301, 4000), "contig",
                                                                   "wideloop"),
                              ((3, 20000), "contig", "widesplit"))]
# rows of 16384 on 512 threads, enough of them for blocks of two rows on the H100 (perf-notes
# r18), an odd count
CASES += [(op, dt, (601, 16384), "contig", None, None)
          for op, dt in (("rms_norm", "bfloat16"), ("softmax", "bfloat16"), ("softmax", "float32"),
                         ("layer_norm", "float32"))]
# layer_norm's 16-bit staged kernels hold 64 elements a thread (rows of 8192 on 128 threads;
# on the H200 the register rows' 256 of 32), full and one short; a full warp (2048) and a full
# 64-thread block (4096); equal and non-finite
CASES += [("layer_norm", dt, s, "contig", sp, None) for dt in ("bfloat16", "float16")
          for s, sp in (((2000, 8192), None), ((300, 8191), None), ((500, 2048), None),
                        ((64, 4096), "equal"), ((64, 8192), "nonfinite"))]
# layer_norm's one pass of sums a thread around its first element (perf-notes r29): that
# element far from the rest, on whole and partial rows, in each automatic layout
CASES += [("layer_norm", dt, s, "contig", "firsts", None) for dt in ("bfloat16", "float32")
          for s in ((300, 8192), (64, 4096), (37, 3001), (5, 65536))]
# 16-bit layer_norm's vectors (the cases above: a float32 bias beside a 16-bit weight): both
# in x's dtype, and both float32 (the row groups of a block share one copy, perf-notes r35);
# rows an odd count, whole and partial, in each layout (rows of 1000: the warp layout, whose
# four warps a block share them too)
CASES += [("layer_norm", dt, s, lay, sp, var) for dt in ("bfloat16", "float16")
          for sp in ("bias16", "vecs32")
          for s, lay, var in (((2001, 8192), "contig", None), ((301, 8191), "contig", None),
                              ((603, 4096), "contig", None), ((37, 3000), "rowstride", None),
                              ((37, 2000), "contig", "pairs"), ((37, 2000), "contig", "loop1"),
                              ((301, 1000), "contig", None), ((3, 40000), "contig", None))]

# the register-row layout (perf-notes r43): automatic for 16-bit rows of 2049-8192 on the H200
# (the cases above at 8192, 8191, 5000, 4097 and 4096 take it there; not rms_norm's at 8192 or
# at 4096 and under), and forced: partial threads,
# rows of a stride, a padded copy, one warp a row, the values the statistics must survive
CASES += [(op, dt, s, lay, sp, var) for dt in ("bfloat16", "float16")
          for op in ("rms_norm", "layer_norm", "softmax")
          for s, lay, sp, var in (((3000, 8192), "contig", None, "regs"),
                                  ((301, 6000), "rowstride", None, "regs"),
                                  ((37, 5001), "misaligned", None, "regs"),
                                  ((600, 4096), "contig", None, "regs64"),
                                  ((1000, 1000), "contig", None, "regs32"),
                                  ((64, 8192), "contig", "nonfinite", "regs"),
                                  ((64, 8192), "contig", "equal", "regs"))]
# as the automatic choice takes it anywhere (env NBKERNELS_ROW_VARIANT=regs): rows filling
# whole warps of 32-element threads (5120 on 160, 6144 on 192, 7168 on 224, 8192 on 256, 4096
# on 128, 3072 on 96: perf-notes r50-r51), and a row of 2500 (96 threads, one partial)
CASES += [(op, dt, s, "contig", sp, "regsauto") for dt in ("bfloat16", "float16")
          for op in ("rms_norm", "layer_norm", "softmax")
          for s, sp in (((3000, 5120), None), ((301, 6144), None), ((37, 7168), "nonfinite"),
                        ((64, 5120), "equal"), ((301, 8192), None), ((64, 8192), "equal"),
                        ((603, 4096), None), ((37, 3072), "nonfinite"), ((301, 2500), None))]
# rows in the warp layout on builds of as many slot groups a lane as they need (perf-notes
# r54; the contiguous table's rows of 122, 512 and 1024 take them too): rows of 768 on 24
# elements a lane in every op and dtype, a row stride and a padded copy; 16-bit layer_norm's
# 1280-1792 (5-7 groups a lane), 1000 on 40 (every lane masked, r56), its values
CASES += [(op, dt, (3001, 768), "contig", None, None)
          for op in ("rms_norm", "rms_norm_residual", "layer_norm", "softmax") for dt in DTYPES]
CASES += [(op, "bfloat16", (37, 768), lay, None, None)
          for op in ("rms_norm", "rms_norm_residual", "layer_norm", "softmax")
          for lay in ("rowstride", "misaligned")]
CASES += [("layer_norm", dt, s, "contig", sp, None) for dt in ("bfloat16", "float16")
          for s, sp in (((301, 1280), "firsts"), ((601, 1536), "vecs32"), ((64, 1792), "nonfinite"),
                        ((64, 1000), "equal"), ((601, 768), "bias16"))]
CASES += [("softmax", dt, (64, 768), "contig", sp, None) for dt in ("bfloat16", "float32")
          for sp in ("big", "near1e4", "warpinf")]
# and on a block of 64 threads (r55): rows of 1536 on 24 a thread in every op and dtype, 1100
# and 1280 (idle or partial groups in the second warp), a row stride; 16-bit layer_norm's
# staged rows of 2049-4096 (the H100's side: NBKERNELS_ROWS_LOOP set, as no register rows)
# on 48 and 56 a thread (r56), its two warps exchanging, the vectors its groups share
CASES += [(op, dt, (3001, 1536), "contig", None, None)
          for op in ("rms_norm", "rms_norm_residual", "layer_norm", "softmax") for dt in DTYPES]
CASES += [(op, dt, (301, n), lay, None, None)
          for op, dt, n, lay in (("softmax", "bfloat16", 1100, "contig"),
                                 ("rms_norm_residual", "float16", 1280, "contig"),
                                 ("layer_norm", "float32", 1280, "rowstride"),
                                 ("rms_norm", "bfloat16", 1536, "rowstride"),
                                 ("softmax", "float32", 1100, "misaligned"))]
CASES += [("layer_norm", dt, s, "contig", sp, "stagedauto") for dt in ("bfloat16", "float16")
          for s, sp in (((3001, 3000), None), ((301, 2500), "firsts"), ((601, 3072), "vecs32"),
                        ((64, 2600), "nonfinite"), ((64, 4000), "equal"))]
# softmax on rows that do not start 16-byte aligned, read and written where they are (perf-notes
# r59: a width that is no 16-byte multiple; the contiguous table's 122 and 12290 too): rows on
# a warp (197: ViT's tokens), a 64-thread block (777), a block (3001), staged or in registers
# (4099, 8191), split with every head (50257: GPT-2's vocabulary; a row's last chunk empty
# where its head is short), a forced split; their values
CASES += [("softmax", dt, s, "contig", sp, var) for dt in DTYPES
          for s, sp, var in (((4097, 197), None, None), ((301, 777), "big", None),
                             ((37, 3001), "near1e4", None), ((64, 4099), None, None),
                             ((64, 8191), "nonfinite", None), ((9, 50257), None, None),
                             ((37, 3001), "huge", "split256"))]
CASES += [("softmax", dt, (37, 5001), "contig", sp, "regsauto") for dt in ("bfloat16", "float16")
          for sp in (None, "equal")]
# split rows that shared memory holds whole, two blocks an SM, staged whole, a block a row
# (perf-notes r62; enough rows: 2 x the SMs): 3 chunks of 16-bit rows of 20000, 7 of 50257
# (misaligned: shifted), 2 of float32 rows of 12000, their values; float32 rows of 40000 (five
# chunks, 160 KB: two passes), and the two passes forced where the row would fit
CASES += [("softmax", dt, (300, n), "contig", sp, var)
          for dt, n, sp, var in (("bfloat16", 20000, None, None), ("float16", 20000, "big", None),
                                 ("bfloat16", 50257, "nonfinite", None),
                                 ("float16", 50257, None, None), ("float32", 12000, None, None),
                                 ("float32", 12000, "near1e4", None),
                                 ("float32", 40000, None, None),
                                 ("bfloat16", 20000, "huge", "split256_2p"),
                                 ("float32", 12001, None, "split256_2p"))]
CASES += [("softmax", dt, (64, 8000), "contig", sp, "regs") for dt in ("bfloat16", "float16")
          for sp in ("big", "huge", "near1e4", "warpinf")]
CASES += [("layer_norm", dt, (300, 8192), "contig", sp, "regs") for dt in ("bfloat16", "float16")
          for sp in ("firsts", "offset", "bias16", "vecs32")]
# softmax's lanes layout (perf-notes r63; short rows take it by themselves: the tables above
# run it at their rows of up to 1024): blocks' last rows past the rows there are (4097 rows),
# each lane count forced, rows ending in every group of the lanes (1 to 33 elements), rows of
# a stride and in a padded copy, every special value
CASES += [("softmax", dt, s, lay, sp, var) for dt in DTYPES
          for s, lay, sp, var in (((4097, 200), "contig", "nonfinite", "lanes8"),
                                  ((4097, 64), "contig", "huge", "lanes8w"),
                                  ((1025, 500), "contig", "big", "lanes16"),
                                  ((301, 1000), "rowstride", "near1e4", "lanes32"),
                                  ((3, 777, 197), "misaligned", "equal", "lanesauto"),
                                  ((3001, 197), "contig", "warpinf", None),
                                  ((2049, 1000), "contig", None, None))]
CASES += [("softmax", dt, (129, n), "contig", None, None) for dt in ("bfloat16", "float32")
          for n in range(1, 34)]
# rms_norm's lanes layout (r63), with and without a residual: the same shapes by the automatic
# choice and each lane count forced
CASES += [(op, dt, s, lay, sp, var) for op in ("rms_norm", "rms_norm_residual") for dt in DTYPES
          for s, lay, sp, var in (((4097, 200), "contig", "nonfinite", "lanes8"),
                                  ((1025, 500), "contig", "big", "lanes16"),
                                  ((301, 1000), "rowstride", None, "lanes32"),
                                  ((3, 777, 197), "misaligned", None, "lanesauto"),
                                  ((3001, 768), "contig", None, None),
                                  ((2049, 1024), "contig", None, None))]
CASES += [(op, dt, (129, n), "contig", None, None) for op in ("rms_norm", "rms_norm_residual")
          for dt in ("bfloat16", "float32") for n in range(1, 34, 4)]
# layer_norm's lanes layout (r64): each lane count forced, the automatic choice, its values
CASES += [("layer_norm", dt, s, lay, sp, var) for dt in DTYPES
          for s, lay, sp, var in (((4097, 200), "contig", "firsts", "lanes8"),
                                  ((1025, 500), "contig", "offset", "lanes16"),
                                  ((301, 1000), "rowstride", "nonfinite", "lanes32"),
                                  ((3, 777, 197), "misaligned", None, "lanesauto"),
                                  ((3001, 768), "contig", "equal", None),
                                  ((2049, 1024), "contig", "firsts", None))]
CASES += [("layer_norm", dt, (129, n), "contig", None, None) for dt in ("bfloat16", "float32")
          for n in range(1, 34, 4)]


def _fw(fw):
    if fw == "cupy":
        pytest.importorskip("cupy")
    if fw == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch without CUDA")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_cupy(case):
    _fw("cupy")
    fails = run_case(case, np.random.default_rng(), "cupy")
    assert not fails, "\n".join(fails[:10])


@pytest.mark.parametrize("case", [c for c in CASES if c[2][0] * c[2][1] <= 1 << 22], ids=str)
def test_torch(case):
    _fw("torch")
    fails = run_case(case, np.random.default_rng(), "torch")
    assert not fails, "\n".join(fails[:10])


@pytest.mark.parametrize("case", [c for c in CASES if c[3] == "contig"][::5], ids=str)
def test_numpy_round_trip(case):
    fails = run_case(case, np.random.default_rng(), "numpy")
    assert not fails, "\n".join(fails[:10])


@pytest.mark.parametrize("fw", ["cupy", "torch"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(1, 4096), (64, 4096), (3, 40000), (64, 5120), (2, 8000),
                                   (300, 200), (300, 197)])
def test_repeat_calls_replay_with_new_data(op, shape, fw):
    """The second and later calls take the replay path; each must see its own inputs (rows
    of 5120 and 8000: the register rows on the H200, 160 and 256 threads of 32; softmax's
    rows of 200 and 197: its lanes layout, aligned and shifted, perf-notes r63)."""
    if op == "swiglu_packed" and shape[-1] % 2:
        pytest.skip("swiglu's packed halves need an even width (tests/test_rows_errors.py)")
    _fw(fw)
    rng = np.random.default_rng()
    for _ in range(3):
        for with_out in (True, False):
            fails = run_case((op, "bfloat16", shape, "contig", None, None), rng, fw,
                             with_out=with_out)
            assert not fails, "\n".join(fails[:10])


def test_torch_replays_run_on_the_current_stream():
    """Replays on torch tensors launch on the caller's current stream: queued behind a sleep
    and an update of x on a side stream, each call must see the update."""
    _fw("torch")
    import torch

    import nbkernels
    from nbkernels.rows import rms_norm_ref

    x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    for _ in range(2):  # the full calls that record the launches (the first reads registers)
        nbkernels.rms_norm(x, w)
        nbkernels.rms_norm(x, w, out=out)
    for y, new, _ in replays_on_side_stream(lambda o: nbkernels.rms_norm(x, w, out=o), x, out):
        m = mismatch("rms_norm on a torch stream", to_numpy(y),
                     rms_norm_ref(to_numpy(new), to_numpy(w)), "bfloat16")
        assert m is None, m


def test_in_place_and_stream():
    cupy = pytest.importorskip("cupy")
    import nbkernels
    from nbkernels.rows import rms_norm_ref, softmax_ref

    rng = np.random.default_rng()
    xh = rng.standard_normal((300, 2048)).astype(np.float16)
    wh = rng.standard_normal(2048).astype(np.float16)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x, w = cupy.asarray(xh), cupy.asarray(wh)
    y = nbkernels.softmax(x, out=x, stream=s)
    s.synchronize()
    assert y is x
    assert mismatch("softmax in place", x.get(), softmax_ref(xh), "float16") is None
    x = cupy.asarray(xh)
    r = cupy.asarray(xh[::-1].copy())
    res = nbkernels.rms_norm(x, w, residual=r, out=x, residual_out=r)
    want_y, want_h = rms_norm_ref(xh, wh, residual=xh[::-1].copy())
    assert res.out is x and res.residual is r
    assert mismatch("rms_norm in place", x.get(), want_y, "float16") is None
    assert mismatch("residual in place", r.get(), want_h.astype(np.float64), "float16") is None


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "softmax", "swiglu"])
def test_out_overlapping_x_shifted_by_a_row(op):
    """out=buf[1:] for x=buf[:-1]: run in place, blocks would read rows another block already
    wrote (many rows, blocks looping over them). Twice: the full path, then a repeat call with
    the key of an out-of-place call recorded first (the replay must decline it)."""
    cupy = pytest.importorskip("cupy")
    import nbkernels
    from nbkernels.rows import layer_norm_ref, rms_norm_ref, softmax_ref, swiglu_ref

    rng = np.random.default_rng()
    n = 1024
    w = cupy.asarray(rng.standard_normal(n).astype(np.float16))
    u = cupy.asarray(rng.standard_normal((8191, n)).astype(np.float16))
    call = {"rms_norm": lambda x, out: nbkernels.rms_norm(x, w, out=out),
            "layer_norm": lambda x, out: nbkernels.layer_norm(x, w, w, out=out),
            "softmax": lambda x, out: nbkernels.softmax(x, out=out),
            "swiglu": lambda x, out: nbkernels.swiglu(x, u, out=out)}[op]
    ref = {"rms_norm": lambda x: rms_norm_ref(x, w.get()),
           "layer_norm": lambda x: layer_norm_ref(x, w.get(), w.get()),
           "softmax": softmax_ref, "swiglu": lambda x: swiglu_ref(x, u.get())}[op]
    for attempt in range(2):
        buf = cupy.asarray(rng.standard_normal((8192, n)).astype(np.float16))
        xh = buf[:-1].get()
        if attempt:  # record an out-of-place call of the same key first
            call(cupy.asarray(xh), cupy.empty_like(buf[1:]))
        y = call(buf[:-1], buf[1:])
        assert y.data.ptr == buf[1:].data.ptr
        m = mismatch(f"{op} out=x shifted by a row ({'repeat' if attempt else 'first'} call)",
                     buf[1:].get(), ref(xh), "float16")
        assert m is None, m


@pytest.mark.parametrize("fw", ["cupy", "torch"])
@pytest.mark.parametrize("dt, rows, n, lay", [("bfloat16", 4097, 197, "base1"),
                                              ("float16", 9, 50257, "base1"),
                                              ("bfloat16", 301, 4099, "stride3"),
                                              ("float32", 1001, 777, "base1"),
                                              ("float32", 37, 3001, "stride3")])
def test_misaligned_softmax_in_place_and_into_an_out_laid_out_alike(fw, dt, rows, n, lay):
    """softmax on rows that start off a 16-byte boundary (one element into the buffer, or
    rows n + 3 apart), in place and into an out laid out as x (perf-notes r59: a shifted
    build, no padded copy): the result, the buffers' elements outside the rows unchanged (the
    rows before's, the gaps), x unchanged where out is another array; three calls, so the
    repeat calls replay the recorded launch on new data."""
    pytest.importorskip(fw)
    import nbkernels
    from nbkernels.rows import host, softmax_ref

    from .row_cases import _layout

    rng = np.random.default_rng()
    size = rows * (n + 3) + 1

    def laid(buf):
        if lay == "base1":
            return buf[1: 1 + rows * n].reshape(rows, n)
        return buf[: rows * (n + 3)].reshape(rows, n + 3)[:, :n]

    inside = np.zeros(size, bool)
    first = 1 if lay == "base1" else 0
    inside[first + np.arange(rows)[:, None] * (n if lay == "base1" else n + 3)
           + np.arange(n)[None, :]] = True
    pads = []
    padded = host._padded
    host._padded = lambda *a, **k: pads.append(1) or padded(*a, **k)
    try:
        for attempt in range(3):
            for where in ("in place", "out"):
                xh = (rng.standard_normal(size) * 3).astype(DTYPES[dt])
                xbuf = _layout(xh, "contig", fw)
                x = laid(xbuf)
                want = softmax_ref(laid(xh))
                if where == "in place":
                    obuf, oh = xbuf, xh
                    y = nbkernels.softmax(x, out=x)
                else:
                    oh = np.full(size, np.nan, DTYPES[dt])
                    obuf = _layout(oh, "contig", fw)
                    y = nbkernels.softmax(x, out=laid(obuf))
                label = f"{fw} {dt} {rows}x{n} {lay} {where} call {attempt}"
                got = to_numpy(obuf)
                m = mismatch(label, to_numpy(y), want, dt)
                assert m is None, m
                assert np.array_equal(got[~inside], oh[~inside], equal_nan=True), \
                    f"{label}: elements outside out's rows changed"
                if where == "out":
                    assert np.array_equal(to_numpy(xbuf), xh), f"{label}: x changed"
    finally:
        host._padded = padded
    assert not pads, f"{len(pads)} padded copies, expected none (rows worked on in place)"


def test_softmax_other_axis_torch():
    _fw("torch")
    import torch

    import nbkernels
    from nbkernels.rows import softmax_ref

    x = torch.randn(33, 17, 9, device="cuda", dtype=torch.bfloat16)
    for axis in (0, 1, -1):
        got = nbkernels.softmax(x, axis=axis)
        assert got.shape == x.shape and got.dtype == x.dtype
        m = mismatch(f"axis {axis}", to_numpy(got).swapaxes(axis, -1),
                     softmax_ref(to_numpy(x), axis).swapaxes(axis, -1), "bfloat16")
        assert m is None, m


@pytest.mark.parametrize("mode", ["0", "1", "2", "4", "pairs"])
@pytest.mark.parametrize("op", OPS)
def test_loop_modes(op, mode, monkeypatch):
    """NBKERNELS_ROWS_LOOP (the benchmark's comparison): a block per row, blocks looping
    with a ring of 1, 2 or 4 buffers, or blocks of two rows (pairs; an odd count leaves the
    last block one); each must give the same results, replays included."""
    _fw("cupy")
    monkeypatch.setenv("NBKERNELS_ROWS_LOOP", mode)
    rng = np.random.default_rng()
    # the second: replays; the last: an odd number of rows
    for shape in ((3000, 4096), (3000, 4096), (12000, 512), (2999, 2048)):
        fails = run_case((op, "bfloat16", shape, "contig", None, None), rng, "cupy")
        assert not fails, "\n".join(fails[:10])


def test_layout_follows_the_bandwidth_per_sm(monkeypatch):
    """The automatic layout at 8192 x 8192 on this GPU (perf-notes r18, r27, r43): where DRAM
    feeds an SM at most 30 GB/s (the H100), 16-bit softmax and rms_norm a block of 256 threads
    per row (32 elements a thread); above (the H200), 16-bit softmax and layer_norm in the
    register-row layout, a block of 256 threads (32 elements a thread) per row (perf-notes
    r50), rms_norm its 64-element build's staged block of 128. The device attributes the rule
    reads are the driver's."""
    cupy = pytest.importorskip("cupy")
    from numba import cuda

    import nbkernels
    from nbkernels.rows import config, host

    monkeypatch.delenv("NBKERNELS_ROWS_LOOP", raising=False)
    monkeypatch.delenv("NBKERNELS_ROW_VARIANT", raising=False)
    bw = host.dram_gbps_per_sm(cuda.get_current_device())
    assert 5 < bw < 200, f"peak DRAM bandwidth per SM: {bw} GB/s"
    wide = bw > config.PER_ROW_MAX_GBPS_PER_SM
    x = cupy.ones((8192, 8192), cupy.float16)
    def plan():
        return host.LAST_PLAN["blocks"], host.LAST_PLAN["threads"], host.LAST_PLAN["layout"]

    want = (8192, 256, "regs") if wide else (8192, 256, "block")
    for _ in range(2):  # the second call is planned with the kernel's real registers
        nbkernels.softmax(x)
    assert plan() == want, (bw, host.LAST_PLAN)
    for _ in range(2):  # rows of 8192: the 64-element build's block a row (r45)
        nbkernels.rms_norm(x, x[0])
    assert plan() == (8192, 128 if wide else 256, "block"), (bw, host.LAST_PLAN)
    if wide:
        nbkernels.layer_norm(x, x[0], x[1])
        assert plan() == want, (bw, host.LAST_PLAN)
        # rows of 5120 fill 160 threads of 32 elements: every op in registers on those
        y = cupy.ones((64, 5120), cupy.float16)
        for op in (lambda: nbkernels.softmax(y), lambda: nbkernels.rms_norm(y, y[0]),
                   lambda: nbkernels.layer_norm(y, y[0], y[1])):
            op()
            assert plan() == (64, 160, "regs"), (bw, host.LAST_PLAN)
        # rows of 4096 (session 49, r51): layer_norm and softmax in registers on 128 threads
        # of 32; rms_norm staged
        v = cupy.ones((64, 4096), cupy.float16)
        for op in (lambda: nbkernels.softmax(v), lambda: nbkernels.layer_norm(v, v[0], v[1])):
            op()
            assert plan() == (64, 128, "regs"), (bw, host.LAST_PLAN)
        nbkernels.rms_norm(v, v[0])
        assert host.LAST_PLAN["layout"] != "regs", (bw, host.LAST_PLAN)
    # float32 rows of 5120 stage on the fewest whole warps, 160 threads (not 256; r47)
    z = cupy.ones((64, 5120), cupy.float32)
    for _ in range(2):
        nbkernels.softmax(z)
    assert (host.LAST_PLAN["threads"], host.LAST_PLAN["layout"]) == (160, "block"), \
        host.LAST_PLAN


def test_resident_estimate_matches_the_driver():
    """config.resident_blocks, from a kernel's real registers, against the driver's occupancy
    query for the same function: the grid of the row loop is sized from the estimate."""
    cupy = pytest.importorskip("cupy")
    from cuda.bindings import driver as drv

    import nbkernels
    from nbkernels.rows import config, host
    from nbkernels.smem import device_limits

    x = cupy.ones((300, 4096), cupy.float32)
    for dt in (cupy.float32, cupy.float16):
        xs = x.astype(dt)
        for _ in range(2):
            nbkernels.rms_norm(xs, xs[0], residual=xs)
            nbkernels.layer_norm(xs, xs[0], xs[0])
            nbkernels.layer_norm(xs, x[0], x[0])  # float32 vectors: the shared build's
            nbkernels.softmax(xs)  # 16 named barriers, for 16-bit rows
            nbkernels.swiglu(xs, xs)
    lim = host.sm_limits()
    max_smem = device_limits()[1]
    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    wrong = []
    assert host._KERNEL_INFO
    for regs, static, f, barriers in host._KERNEL_INFO.values():
        drv.cuFuncSetAttribute(f, attr, max_smem - static)
        for threads in (32, 128, 256, 512):
            for smem in (0, 16384, 49152, 70000, 114688, max_smem - static):
                err, got = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, threads, smem)
                assert err == drv.CUresult.CUDA_SUCCESS, err
                want = config.resident_blocks(threads, regs, smem + static, lim, barriers)
                if got != want:
                    wrong.append(f"{regs} regs, {static} B static, {barriers} barriers, "
                                 f"{threads} threads, {smem} B: driver {got}, estimate {want}")
    assert not wrong, "\n".join(wrong[:20])


_CACHED = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from row_cases import run_case
fails = []
for op in ("rms_norm", "swiglu"):  # through run_phases and through loop_launch directly
    fails += run_case((op, "float32", (5, 1000), "contig", None, None), np.random.default_rng(), "cupy")
print("\\n".join(fails) or "ok")
"""


def test_row_kernels_come_from_the_disk_cache_in_a_new_process(tmp_path):
    """A row kernel built by one process is read from the disk cache by the next, which
    rebuilds nothing and still gets right results (before, no row kernel was written to the
    cache: every process compiled its own, 10-50 s each; perf-notes r17)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("cupy")
    env = dict(os.environ, NBKERNELS_CACHE_DIR=str(tmp_path))
    here = os.path.dirname(os.path.abspath(__file__))

    def run():
        p = subprocess.run([sys.executable, "-c", _CACHED, here], env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout + p.stderr
        return {f.name: f.stat().st_mtime_ns for f in tmp_path.iterdir()}

    first = run()
    assert len([n for n in first if n.endswith(".cubin")]) >= 2, sorted(first)
    assert run() == first  # nothing written again: both kernels were read back


@pytest.mark.parametrize("what", ["padded copy", "split rows"])
def test_stream_argument_orders_the_calls_copies_and_temporaries(what):
    """As the GEMM's: ``stream=`` held back ~20 ms, allocations on the current stream right
    after the call filled with NaN. A misaligned input is copied into padded rows, and rows of
    2**20 elements run on several blocks a row with a workspace: both must be made on that
    stream and from its pool."""
    cupy = pytest.importorskip("cupy")
    import nbkernels
    from nbkernels.rows import softmax_ref

    from .torch_streams import clobber_current_pool, cupy_sleep

    rng = np.random.default_rng()
    shape = (64, 4097) if what == "padded copy" else (2, 1 << 20)
    xh = rng.standard_normal(shape).astype(np.float32)
    x = cupy.asarray(xh)[:, 1:] if what == "padded copy" else cupy.asarray(xh)
    want = softmax_ref(xh[:, 1:] if what == "padded copy" else xh)
    s = cupy.cuda.Stream(non_blocking=True)
    for _ in range(2):  # the first call, then a repeat call where it has one
        cupy.cuda.Device().synchronize()
        cupy_sleep(s, 20)
        y = nbkernels.softmax(x, stream=s)
        junk = clobber_current_pool()
        s.synchronize()
        del junk
        m = mismatch(f"softmax on a held-back stream ({what})", y.get(), want, "float32")
        assert m is None, m


def test_a_read_only_numpy_out_is_refused_before_the_work():
    """NumPy arrays with a GPU present go through device copies (``host.via_device``): a
    read-only ``out`` is refused by name before anything runs, and keeps its values."""
    import nbkernels
    from nbkernels.errors import NbkernelsError

    x = np.random.default_rng().standard_normal((8, 256)).astype(np.float32)
    out = np.full_like(x, 7.0)
    out.flags.writeable = False
    with pytest.raises(NbkernelsError,
                       match=r"softmax: out is read-only \(flags.writeable is False\)"):
        nbkernels.softmax(x, out=out)
    assert (out == 7.0).all()
