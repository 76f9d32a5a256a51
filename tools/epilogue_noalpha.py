"""Measurement only (perf-notes s18): the sm90a GEMM with its staged epilogue's multiply by
alpha left out, what skipping it when alpha == 1 could at best gain (the benchmark calls
with alpha = 1, so its results stay right and its error column checks them); in this
process, with its own kernel cache; nothing ships.

    python tools/epilogue_noalpha.py [bench_hopper arguments]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from epilogue_knockout import run  # noqa: E402


def apply():
    from nbkernels.matmul import wgmma_kernel as wk

    scaled = wk.element_source

    def unscaled(x, acc, *args, **kwargs):
        lines, val = scaled(x, acc, *args, **kwargs)
        assert lines[0].strip() == f"a{x} = alpha * {acc}", lines[0]
        return [lines[0].replace("alpha * ", "")] + lines[1:], val

    wk.element_source = unscaled  # staged_epilogue looks it up when it builds


if __name__ == "__main__":
    os.environ["NBKERNELS_CACHE_DIR"] = os.path.abspath(".nbk_cache_noalpha")
    apply()
    print("staged epilogue without the alpha multiply", flush=True)
    sys.exit(run(sys.argv[1:]))
