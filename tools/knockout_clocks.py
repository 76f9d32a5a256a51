"""SM clock and power of the epilogue knock-out builds (tools/epilogue_knockout.py) against
cuBLAS, back to back for a few seconds each: does a build that stores no D run at a higher
clock (the board at its power limit), or does it do more work per clock? (perf-notes s15)

    python tools/knockout_clocks.py VARIANT [MxNxK] [seconds]
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))


def main(argv):
    variant = argv[0]
    m, n, k = (int(v) for v in (argv[1] if len(argv) > 1 else "8192x8192x1024").split("x"))
    seconds = float(argv[2]) if len(argv) > 2 else 3.0
    # one kernel cache per variant (the cache key does not see the knock-out)
    os.environ["NBKERNELS_CACHE_DIR"] = os.path.join(tempfile.gettempdir(),
                                                     f"nbk-knockout-{variant}")
    import epilogue_knockout

    epilogue_knockout.apply(variant)
    import torch

    import nbkernels
    from clocks_sm90a import report

    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(k, n, device="cuda").bfloat16()
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    flop = 2.0 * m * n * k
    runs = {f"nbk {variant}": lambda: nbkernels.gemm(a, b, out=out),
            "cuBLAS": lambda: torch.matmul(a, b, out=out)}
    report(f"{m}x{n}x{k} bf16", runs, seconds, flop)


if __name__ == "__main__":
    main(sys.argv[1:])
