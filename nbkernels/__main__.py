"""Command line: ``python -m nbkernels {info,demo}``."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nbkernels", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, device or 'no GPU', compile target, CUDA tools")
    sub.add_parser("demo", help="run a tensor-core tile through nbkernels and check it")
    args = ap.parse_args(argv)
    if args.command == "info":
        from .info import main as info_main

        return info_main(args)
    from .demo import main as demo_main

    return demo_main(args)


if __name__ == "__main__":
    sys.exit(main())
