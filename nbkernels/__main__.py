"""Command line: ``python -m nbkernels {info,demo,doctor,compile,validate}``."""
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
    from . import aot, doctor, validate

    doctor.add_arguments(sub.add_parser(
        "doctor", help="driver, toolkit and package versions, what will fail, and the remedy"))
    aot.add_arguments(sub.add_parser(
        "compile", help="build every kernel variant for the named archs (no GPU needed)"))
    validate.add_arguments(sub.add_parser(
        "validate", help="run an older arch's variants (PTX JIT) on this GPU against references"))
    args = ap.parse_args(argv)
    from .errors import NbkernelsError

    try:
        if args.command == "info":
            from .info import main as info_main

            return info_main(args)
        commands = {"doctor": doctor.main, "compile": aot.main, "validate": validate.main}
        return commands.get(args.command, demo.main)(args)
    except NbkernelsError as e:  # a bad argument or setting: its message, not a traceback
        print(f"python -m nbkernels {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
