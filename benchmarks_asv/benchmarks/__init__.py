"""nbkernels' asv suite: GEMM (gemm.py), row kernels (rows.py), compile and start time (startup.py).

Every module imports only the standard library at import time: asv imports each one to discover
the benchmarks, and a GPU touched there would be touched on machines without one.
"""
