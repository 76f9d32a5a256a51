"""Measurement only (perf-notes s18): the deferred stores (``WgmmaConfig.defer``) with a warp
barrier at the end of each chunk's stores (``store_rows``), as session 20's experiment had
it, in this process (its own kernel cache); nothing ships.

    python tools/defer_barrier.py [bench_hopper arguments, e.g. --configs 128x256x4e2]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from epilogue_knockout import patched, run  # noqa: E402


def apply():
    from nbkernels.matmul import wgmma_kernel as wk

    exec(patched(wk._rows_storer, [  # noqa: S102
        ('    ns = {"I": I, "uint32": uint32}',
         '    src.append("    I.warp_sync()")\n    ns = {"I": I, "uint32": uint32}')]), vars(wk))
    wk.store_rows = wk._rows_storer()


if __name__ == "__main__":
    os.environ["NBKERNELS_CACHE_DIR"] = os.path.abspath(".nbk_cache_barrier")
    apply()
    print("deferred stores with a warp barrier after each chunk's stores", flush=True)
    sys.exit(run(sys.argv[1:]))
