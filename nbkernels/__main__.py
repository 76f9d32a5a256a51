"""Command line: ``python -m nbkernels {info,demo}``."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    from . import demo

    ap = argparse.ArgumentParser(prog="python -m nbkernels", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, device or 'no GPU', compile target, CUDA tools")
    demo.add_arguments(sub.add_parser(
        "demo", help="the main job: a GEMM on this machine, checked against NumPy and timed"))
    args = ap.parse_args(argv)
    if args.command == "info":
        from .info import main as info_main

        return info_main(args)
    return demo.main(args)


if __name__ == "__main__":
    sys.exit(main())
