"""How much of the sm90a GEMM's time its epilogue takes: the Hopper benchmark with the staged
epilogue cut down, for measurement only (the results are wrong; nothing here ships).

    python tools/epilogue_knockout.py VARIANT [bench_hopper arguments]
    python tools/epilogue_knockout.py VARIANT --profile MxNxK   (under ncu: tools/profile_ncu.py)

VARIANT:
  full      the kernel as it ships (the same process set-up, for comparison);
  stage     the accumulators converted and written to shared memory (stmatrix), but not read
            back nor stored to global memory: what a TMA store (whose copy runs in the async
            proxy, without the warps) could at best leave to the consumers;
  none      no epilogue: one 16-byte store a warp, made only if an accumulator holds an
            impossible value, so that the wgmma results stay live.

Each variant compiles into its own cache directory (the kernel's cache key does not see the
change). Perf-notes s15 says what was expected and what came out. The variants cut the
epilogue's own stores only: for a tile with deferred stores (``WgmmaConfig.defer``, the
default's since session 21) the deferred chunks are still stored in the next tile's k-loop,
so compare tiles without it (``--configs 128x256x4``).
"""
import inspect
import os
import sys
import tempfile
import textwrap


def patched(fn, edits):
    """``fn``'s source with each ``(old, new)`` replaced; each ``old`` must occur once (else
    the kernel code changed under the experiment)."""
    src = textwrap.dedent(inspect.getsource(fn))
    for old, new in edits:
        assert src.count(old) == 1, f"{fn.__name__} changed: update the experiment ({old!r})"
        src = src.replace(old, new)
    return src


def run(argv):
    """The benchmark (bench_hopper arguments) or, with ``--profile MxNxK``, one launch of the
    patched kernel and cuBLAS's for ncu (tools/profile_ncu.py), in this process."""
    if argv[:1] == ["--profile"]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import profile_ncu

        return profile_ncu.main(["gemm", *argv[1:]])
    from nbkernels.matmul import bench_hopper

    return bench_hopper.main(argv)


def apply(variant):
    """Replace ``wgmma_kernel.staged_epilogue`` by the variant's (before any kernel is built)."""
    from numba import float32, uint32

    from nbkernels import intrinsics as I
    from nbkernels.matmul import wgmma_kernel
    from nbkernels.matmul.mma_kernel import _dev

    if variant == "stage":
        ns = dict(vars(wgmma_kernel))
        exec(patched(wgmma_kernel.staged_epilogue,  # noqa: S102
                     [("if not kept:", "if False:")]), ns)  # staged, never stored
        wgmma_kernel.staged_epilogue = ns["staged_epilogue"]
    elif variant == "none":
        def no_epilogue(NF, out_kind, epilogue, n_extra, offload=False, defer=0):
            def store_staged(acc, wrow, n0, lane, M, alpha, d_base, ldd_r, buf, extra):
                if acc[0, 0, 0] == float32(-1.2345e-30):
                    I.st_global_v4_if(d_base, (uint32(0), uint32(0), uint32(0), uint32(0)),
                                      uint32(lane == 0))
            return _dev(store_staged)
        wgmma_kernel.staged_epilogue = no_epilogue
    elif variant != "full":
        raise SystemExit(__doc__)


if __name__ == "__main__":
    variant = sys.argv[1] if len(sys.argv) > 1 else ""
    os.environ["NBKERNELS_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"nbk-knockout-{variant}-")
    apply(variant)
    print(f"knockout variant: {variant}", flush=True)
    sys.exit(run(sys.argv[2:]))
