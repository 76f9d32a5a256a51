"""GEMM speed against cuBLAS, in one process: ``python -m nbkernels.matmul.bench``.

Times with CUDA events after warm-up, each timed call queued behind a spin kernel so that the
host's overhead stays outside the events (``_time``; the host's part is reported apart, and
tools/overhead.py measures it in a loop), takes medians, rotates among input sets larger than
L2, and measures cuBLAS (torch.matmul, torch._int_mm for int8, and cupy.matmul where it has
the dtype) per shape on the same buffers in the same run, and every tile given (``--tiles``,
e.g. a tile with and without ``frag_db=1``), all of them in two passes, the second in reverse
order (:func:`abba`), each job first run on its own for ``--settle`` seconds (the clock
follows the power draw with a lag).
For bf16 / f16 from 2048^3 of work, the ``mma.sync`` register-only ceiling (``ceiling.py``) is
timed as one more job, for the GEMM's flops: issue #3's target is a share of it, and it moves
with the clock as the GEMM does. FLOPs = 2*M*N*K per GEMM. Prints a line per measurement;
``--json`` saves the numbers, ``--summary`` prints saved ones as a table.
``--prewarm N`` first compiles every configuration the run will launch, in N processes.
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys

import numpy as np

SQUARE = [128, 256, 512, 1024, 2048, 4096, 8192]
LLM = [(16, 4096, 4096), (4096, 11008, 4096), (8192, 8192, 1024), (4096, 4096, 4096)]
NAMES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "s8": "int8", "f64": "float64"}


_SPIN_SRC = r"""
extern "C" __global__ void nbk_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}"""


@functools.lru_cache(maxsize=None)
def _spinner():
    """A one-thread kernel that keeps the stream busy for a given number of SM clock cycles."""
    import cupy

    return cupy.RawKernel(_SPIN_SRC, "nbk_spin")


def _spin(seconds, hz):
    _spinner()((1,), (1,), (np.int64(seconds * hz),))


@functools.lru_cache(maxsize=None)
def _spin_hz():
    """SM cycles per second of the spin kernel, measured (the clock under load, not the
    nominal one): a 2 ms spin timed with events."""
    import cupy

    cycles = 4_000_000
    _spinner()((1,), (1,), (np.int64(cycles // 100),))
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    s.record()
    _spinner()((1,), (1,), (np.int64(cycles),))
    e.record()
    e.synchronize()
    return cycles / (cupy.cuda.get_elapsed_time(s, e) * 1e-3)


#: Seconds each job runs on its own before it is timed (``--settle``). 0, the default, times
#: the burst regime most benchmarks report (a few warm-up calls, then ~20 timed ones); 0.3
#: times the sustained one, at the clock the board holds under that job's power draw: every
#: GEMM (cuBLAS included) loses 5-20% there, the mma.sync ceiling does not (perf-notes t3).
SETTLE_S = 0.0


def _time(fn, sets, reps, warmup=3, settle=None):
    """Median device seconds of one call of ``fn(*sets[i])``, and the list of samples.

    Before timing, the job runs back to back for ``settle`` seconds (default ``SETTLE_S``):
    the board's clock follows its power draw with a lag, so a kernel timed right after 40-80 ms
    of cuBLAS at the power limit runs at the clock cuBLAS left, not its own (perf-notes t3).

    Each timed call is enqueued behind a spin kernel that outlasts the host's own work for the
    call (twice the host time per call measured in the warm-up, at least 20 us), so the start
    event fires only when the call's first kernel is already queued: the events hold the
    device time of the call, not the Python and launch overhead in front of it. That overhead
    is real and is reported apart (``host_seconds``, the median time the call took to return
    while the device was busy: what a loop of calls pays when the device is faster than the
    host). Input sets rotate, so no set is in L2 when its turn comes (the caller makes ``sets``
    larger than L2)."""
    import time

    import cupy

    stream = cupy.cuda.get_current_stream()
    host = []
    for i in range(warmup):
        stream.synchronize()
        t0 = time.perf_counter()
        fn(*sets[i % len(sets)])
        host.append(time.perf_counter() - t0)
    stream.synchronize()
    settle = SETTLE_S if settle is None else settle
    t_end, i = time.perf_counter() + settle, warmup
    while time.perf_counter() < t_end:
        fn(*sets[i % len(sets)])
        i += 1
        if i % 4 == 0:  # keep the queue short: the loop ends near ``settle`` of device time
            stream.synchronize()
    stream.synchronize()
    lead = max(20e-6, 2 * min(host) + 10e-6)  # + the spin's and the events' own launches
    hz = _spin_hz()
    events, host = [], []
    for i in range(reps):
        _spin(lead, hz)
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        s.record()
        t0 = time.perf_counter()
        fn(*sets[i % len(sets)])
        host.append(time.perf_counter() - t0)  # the device is busy: this is the host's part
        e.record()
        events.append((s, e))
    events[-1][1].synchronize()
    times = [cupy.cuda.get_elapsed_time(s, e) * 1e-3 for s, e in events]
    _time.host_seconds = statistics.median(host)
    return statistics.median(times), times


_time.host_seconds = float("nan")


def abba(jobs, reps):
    """Median device seconds and median host seconds of each job, timed in two passes whose
    second runs the jobs in reverse order (A B C, then C B A), ``reps`` calls each in all.

    ``jobs``: {name: (fn, sets)} in order, as for :func:`_time`. Timing each job once, one
    after the other, let whatever ran second inherit the first's heat: at 8192^3 the
    sm80-class kernel timed right after cuBLAS ran 358-404 TFLOPS and 436-441 when timed first
    (perf-notes v8). Both passes' samples go into one median per job; each pass's own median
    is left in ``abba.passes`` ({name: (first pass, second pass)}), so that an order effect
    shows as two different figures."""
    names = list(jobs)
    dev = {n: [] for n in names}
    host = {n: [] for n in names}
    passes = {n: [] for n in names}
    first = max(1, reps // 2)
    for order, n_reps in ((names, first), (names[::-1], max(1, reps - first))):
        for name in order:
            fn, sets = jobs[name]
            med, samples = _time(fn, sets, n_reps)
            dev[name] += samples
            host[name].append(_time.host_seconds)
            passes[name].append(med)
    abba.passes = {n: tuple(passes[n]) for n in names}
    return ({n: statistics.median(dev[n]) for n in names},
            {n: statistics.median(host[n]) for n in names})


def _dtype(dt):
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16 if dt == "bf16" else NAMES[dt])


def rotation_count(set_bytes, l2_bytes, most=8):
    """How many input sets of ``set_bytes`` to rotate among so that L2 holds none of them
    between two uses: together three times L2, at least 2 and at most ``most`` sets."""
    return max(2, min(most, -(-3 * l2_bytes // max(set_bytes, 1))))


#: operand layouts of a run ("rr": both row-major; "c" makes that operand column-major, e.g.
#: "cr" an M-major a, "cc" that and a K-major b); set by ``--layout``
LAYOUT = "rr"


def _laid_out(a, b):
    import cupy

    return (cupy.asfortranarray(a) if LAYOUT[0] == "c" else a,
            cupy.asfortranarray(b) if LAYOUT[1] == "c" else b)


def _inputs(dtype, m, n, k, l2_bytes, rng):
    import cupy

    count = rotation_count((m * k + k * n) * dtype.itemsize, l2_bytes)
    sets = []
    for _ in range(count):
        if dtype == np.int8:
            a = cupy.asarray(rng.integers(-64, 64, (m, k)).astype(np.int8))
            b = cupy.asarray(rng.integers(-64, 64, (k, n)).astype(np.int8))
        else:
            a = cupy.asarray(rng.standard_normal((m, k), np.float32).astype(dtype))
            b = cupy.asarray(rng.standard_normal((k, n), np.float32).astype(dtype))
        sets.append(_laid_out(a, b))
    return sets


def _as_f64(x, bf16):
    """A float64 copy on the GPU (CuPy has no bf16 arithmetic: bf16 is widened from its bits)."""
    import cupy

    if bf16:
        return (x.view(cupy.uint16).astype(cupy.uint32) << 16).view(cupy.float32) \
            .astype(cupy.float64)
    return x.astype(cupy.float64)


def _compact(plan):
    """'128x128x64B 2x2w 4st' from explain()'s tile line."""
    import re

    m = re.search(r"tile: (\d+x\d+x\d+B) tile, (\d+x\d+) warps, (\d+) stages", plan)
    return f"{m.group(1)} {m.group(2)}w {m.group(3)}st" if m else ""


def _torch_sets(sets, bf16):
    import cupy
    import torch

    if bf16:
        return [(torch.from_dlpack(a.view(cupy.int16)).view(torch.bfloat16),
                 torch.from_dlpack(b.view(cupy.int16)).view(torch.bfloat16)) for a, b in sets]
    return [(torch.from_dlpack(a), torch.from_dlpack(b)) for a, b in sets]


def _kwargs(dt, variant, precision, tile):
    kw = {"variant": variant, "tile": tile}
    if dt == "f32":
        kw["precision"] = precision
    return kw


def run(dtypes, shapes, variant=None, precision=None, reps=30, tiles=(None,)):
    """Rows of {dtype, m, n, k, tile, nbk/torch/cupy seconds, TFLOPS, ratio, relerr}."""
    import cupy
    import torch

    import nbkernels

    rng = np.random.default_rng()
    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    rows = []
    for dt in dtypes:
        dtype = _dtype(dt)
        bf16 = dt == "bf16"
        for m, n, k in shapes:
            sets = _inputs(dtype, m, n, k, l2, rng)
            rdt = np.int32 if dtype == np.int8 else dtype
            out = cupy.empty((m, n), rdt)
            a, b = sets[0]
            ref = _as_f64(a, bf16) @ _as_f64(b, bf16)  # float64 reference (cuBLAS DGEMM)
            ref_norm = max(float(cupy.linalg.norm(ref)), 1e-30)
            jobs = {}
            if dt != "s8":
                if dt == "f32":
                    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
                jobs["torch"] = (lambda x, y: torch.matmul(x, y), _torch_sets(sets, bf16))
            elif m > 16 and k % 8 == 0 and n % 8 == 0:  # what torch._int_mm takes
                # cuBLASLt's int8 GEMM, with b stored column-major: the layout it runs at full
                # speed (a row-major b ran 6.7-6.9x slower on an H100; perf-notes a1)
                jobs["torch"] = (torch._int_mm, [(x, y.t().contiguous().t())
                                                 for x, y in _torch_sets(sets, False)])
            if dt in ("f16", "f32", "f64", "s8"):
                try:
                    cupy.matmul(a, b)  # CuPy may not take the dtype
                    jobs["cupy"] = (lambda x, y: cupy.matmul(x, y), sets)
                except Exception:
                    pass
            fl = 2.0 * m * n * k
            if dt in ("bf16", "f16") and fl >= 2.0 * 2048 ** 3:
                from .ceiling import Ceiling

                roof = Ceiling(dt, fl)  # the mma.sync ceiling, same flops, same passes
                jobs["ceiling"] = (roof, sets)
            kws = [_kwargs(dt, variant, precision, tile) for tile in tiles]
            for i, kw in enumerate(kws):
                jobs[i] = (functools.partial(nbkernels.gemm, out=out, **kw), sets)
            dev, host = abba(jobs, reps)
            t_torch, t_cupy = dev.get("torch", float("nan")), dev.get("cupy", float("nan"))
            best = np.nanmin([t_torch, t_cupy]) if not (np.isnan(t_torch) and np.isnan(t_cupy)) \
                else float("nan")
            t_roof = roof.flops / dev["ceiling"] / 1e12 if "ceiling" in jobs else float("nan")
            for i, (tile, kw) in enumerate(zip(tiles, kws)):
                t_nbk, host_nbk = dev[i], host[i]
                # correctness of the timed configuration, against float64
                nbkernels.gemm(a, b, out=out, **kw)
                err = float(cupy.linalg.norm(_as_f64(out, bf16) - ref)) / ref_norm
                plan = nbkernels.explain(a, b, out=out, **kw)
                rows.append({"dtype": dt, "m": m, "n": n, "k": k, "nbk_s": t_nbk,
                             "nbk_host_s": host_nbk, "torch_s": t_torch, "cupy_s": t_cupy, "nbk_tflops": fl / t_nbk / 1e12,
                             "cublas_tflops": fl / best / 1e12, "ratio": best / t_nbk,
                             "ceiling_tflops": t_roof,
                             "passes_tflops": [fl / t / 1e12 for t in abba.passes[i]],
                             "cublas_passes_tflops": [fl / min(ts) / 1e12 for ts in zip(
                                 *[abba.passes[j] for j in ("torch", "cupy") if j in jobs])],
                             "relerr": err, "variant": plan.split("variant: ")[1].split()[0],
                             "precision": precision if dt == "f32" else None,
                             "tile": str(tile) if tile else "heuristic",
                             "plan_tile": _compact(plan)})
                r = rows[-1]
                print(f"{r['tile'][:44]:44s} {dt:5s} {m:6d}x{n:6d}x{k:6d}  nbk "
                      f"{r['nbk_tflops']:7.1f}  cuBLAS {r['cublas_tflops']:7.1f} TFLOPS  ratio "
                      f"{r['ratio']:.3f}  ceiling {t_roof:5.0f} ({r['nbk_tflops'] / t_roof:.2f}x)"
                      f"  relerr {err:.1e}  passes nbk "
                      f"{'/'.join(f'{v:.0f}' for v in r['passes_tflops'])} cuBLAS "
                      f"{'/'.join(f'{v:.0f}' for v in r['cublas_passes_tflops'])}", flush=True)
            del sets, ref
            cupy.get_default_memory_pool().free_all_blocks()
    return rows


def _warm_one(job):
    """One call of one configuration on uninitialized inputs: compiles (or finds on disk) exactly
    the kernels the timed run launches."""
    import cupy

    import nbkernels

    dt, (m, n, k), variant, precision, fields, layout = job
    globals()["LAYOUT"] = layout  # a spawned process
    dtype = _dtype(dt)
    a, b = _laid_out(cupy.empty((m, k), dtype), cupy.empty((k, n), dtype))
    out = cupy.empty((m, n), np.int32 if dtype == np.int8 else dtype)
    nbkernels.gemm(a, b, out=out, **_kwargs(dt, variant, precision, _tile(fields)))
    cupy.cuda.get_current_stream().synchronize()
    return job


def prewarm(dtypes, shapes, variant, precision, tiles, procs):
    """Compile every configuration the run launches, one process per distinct plan."""
    import multiprocessing as mp

    import cupy

    import nbkernels

    jobs, seen = [], set()
    for dt in dtypes:
        for m, n, k in shapes:
            a, b = _laid_out(cupy.empty((m, k), _dtype(dt)), cupy.empty((k, n), _dtype(dt)))
            for t in tiles:
                # the same plan (variant, layouts, loader, tile, split-K) is the same kernels
                plan = nbkernels.explain(a, b, **_kwargs(dt, variant, precision, t))
                if plan.split("\n", 1)[1] not in seen:
                    seen.add(plan.split("\n", 1)[1])
                    jobs.append((dt, (m, n, k), variant, precision, _fields(t), LAYOUT))
            del a, b
    with mp.get_context("spawn").Pool(min(procs, len(jobs))) as pool:
        for _ in pool.imap_unordered(_warm_one, jobs):
            pass
    return len(jobs)


def _fields(tile):
    import dataclasses

    return None if tile is None else dataclasses.asdict(tile)


def _tile(fields):
    from .config import TileConfig

    return None if fields is None else TileConfig(**fields)


def parse_tiles(text):
    """``"default;128,128,64,2,2,4,frag_db=1"`` -> [None, TileConfig(..., frag_db=1)]."""
    from .config import TileConfig

    if not text:
        return [None]
    tiles = []
    for spec in text.split(";"):
        if spec.strip() in ("default", "heuristic", ""):
            tiles.append(None)
            continue
        parts = [p.strip() for p in spec.split(",")]
        args = [int(p) for p in parts if "=" not in p]
        kw = {p.split("=")[0]: int(p.split("=")[1]) for p in parts if "=" in p}
        tiles.append(TileConfig(*args, **kw))
    return tiles


def summary(rows):
    """One line per (dtype, shape): cuBLAS, then each configuration's TFLOPS and ratio."""
    lines = []
    groups = {}
    for r in rows:
        key = (r["dtype"] + (f"/{r['precision']}" if r.get("precision") else ""),
               f"{r['m']}x{r['n']}x{r['k']}")
        groups.setdefault(key, []).append(r)
    for (dt, shape), rs in groups.items():
        cells = [f"{dt:9s} {shape:>15s}  cuBLAS {rs[0]['cublas_tflops']:6.1f}"]
        roof = rs[0].get("ceiling_tflops", float("nan"))
        if roof == roof:  # measured (bf16 / f16 from 2048^3 of work)
            cells.append(f"mma.sync ceiling {roof:5.0f}")
        for r in rs:
            label = r["plan_tile"] + (" db" if "double-buffered" in r["tile"] else "") \
                + (" k8" if "k-groups of 8" in r["tile"] else "")
            cells.append(f"| {r['variant']} {label}: {r['nbk_tflops']:6.1f} ({r['ratio']:.2f}x"
                         + (f", {r['nbk_tflops'] / roof:.2f} of ceiling)" if roof == roof else ")")
                         + ("" if r["relerr"] < 1e-2 else f" ERR {r['relerr']:.1e}"))
        lines.append("  ".join(cells))
    return "\n".join(lines)


def parse_shape(text: str, option: str = "--sizes") -> tuple:
    """``"4096"`` -> (4096, 4096, 4096); ``"4096x11008x4096"`` -> (M, N, K) (this benchmark's
    ``--sizes`` and bench_hopper's ``--shapes``)."""
    parts = text.lower().split("x")
    if len(parts) not in (1, 3) or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"{option}: each item must be N or MxNxK with positive integers, got "
                         f"{text!r}")
    return tuple(int(p) for p in parts) * 3 if len(parts) == 1 else tuple(int(p) for p in parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bf16,f16", help="bf16,f16,f32,s8,f64")
    ap.add_argument("--sizes", default="4096,8192",
                    help="square sizes or MxNxK shapes, or 'sweep' or 'llm'")
    ap.add_argument("--variant")
    ap.add_argument("--precision")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tiles", help="';'-separated tiles: 'default' (the heuristic's) or "
                    "TileConfig fields, e.g. 'default;128,128,64,2,2,4,frag_db=1'")
    ap.add_argument("--prewarm", type=int, default=0, metavar="N",
                    help="first compile every configuration in N processes")
    ap.add_argument("--prewarm-only", action="store_true", help="compile, then stop")
    ap.add_argument("--settle", type=float, default=SETTLE_S, metavar="S",
                    help="seconds each job runs back to back before it is timed")
    ap.add_argument("--layout", default="rr", choices=("rr", "rc", "cr", "cc"),
                    help="a and b row- (r) or column-major (c)")
    ap.add_argument("--json")
    ap.add_argument("--summary", nargs="+", metavar="JSON", help="print saved rows as a table")
    args = ap.parse_args(argv)
    if args.summary:
        rows = []
        for path in args.summary:
            with open(path) as f:
                rows += json.load(f)
        print(summary(rows))
        return 0
    if args.sizes == "sweep":
        shapes = [(s, s, s) for s in SQUARE] + LLM
    elif args.sizes == "llm":
        shapes = LLM
    else:
        shapes = [parse_shape(s) for s in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    tiles = parse_tiles(args.tiles)
    globals()["LAYOUT"] = args.layout
    if args.prewarm or args.prewarm_only:
        n = prewarm(dtypes, shapes, args.variant, args.precision, tiles, args.prewarm or 8)
        print(f"prewarmed {n} configurations", flush=True)
        if args.prewarm_only:
            return 0
    globals()["SETTLE_S"] = args.settle  # _time's default for this run
    rows = run(dtypes, shapes, args.variant, args.precision, args.reps, tiles)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
