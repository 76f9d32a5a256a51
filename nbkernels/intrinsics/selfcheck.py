"""Run every intrinsic probe and check it against its NumPy reference.

``python -m nbkernels.intrinsics.selfcheck --out R.npz [--inputs I.npz] [--seed S]`` runs
all probes where it is started: on the GPU, or in numba's simulator when
``NUMBA_ENABLE_CUDASIM=1``. It saves inputs and outputs, so that the same inputs can be
replayed in the other mode and the two outputs compared bit for bit.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from . import probes

MODES = ("exact", "random")


def _key(probe, mode, kind, name):
    return f"{probe}|{mode}|{kind}|{name}"


def run_all(seed=None, inputs=None, names=None):
    """Run probes; returns ``{key: array}`` with inputs ("in") and outputs ("out")."""
    rng = np.random.default_rng(seed)
    result = {}
    for pname in names or list(probes.PROBES):
        probe = probes.PROBES[pname]
        for mode in MODES:
            if inputs is not None:
                inp = {n: inputs[_key(pname, mode, "in", n)]
                       for n in probe.make_inputs(rng, mode == "exact")}
            else:
                inp = probe.make_inputs(rng, mode == "exact")
            out = probes.run(probe, inp)
            for n, a in inp.items():
                result[_key(pname, mode, "in", n)] = a
            for n, a in out.items():
                result[_key(pname, mode, "out", n)] = a
    return result


def check(result):
    """``{probe|mode: message or None}`` comparing outputs with the references."""
    verdict = {}
    for pname, probe in probes.PROBES.items():
        for mode in MODES:
            ins = {k.split("|")[3]: v for k, v in result.items()
                   if k.startswith(f"{pname}|{mode}|in|")}
            if not ins:
                continue
            outs = {k.split("|")[3]: v for k, v in result.items()
                    if k.startswith(f"{pname}|{mode}|out|")}
            verdict[f"{pname}|{mode}"] = probes.mismatch(
                probe, outs, probe.reference(ins), exact=(mode == "exact"))
    return verdict


def compare_bits(a, b):
    """Keys whose outputs differ bit for bit between two results (``{key: message}``)."""
    diffs = {}
    for k, x in a.items():
        if "|out|" not in k:
            continue
        y = b.get(k)
        if y is None or x.shape != y.shape or x.tobytes() != y.tobytes():
            if y is None or x.shape != y.shape:
                diffs[k] = "missing or different shape"
                continue
            bad = np.argwhere(x.view(np.uint8).reshape(x.shape + (-1,))
                              != y.view(np.uint8).reshape(y.shape + (-1,)))[0][:-1]
            idx = tuple(int(i) for i in bad)
            diffs[k] = f"first difference at {idx}: {x[idx]!r} vs {y[idx]!r}"
    return diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--inputs")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--probe", action="append")
    args = ap.parse_args(argv)
    inputs = dict(np.load(args.inputs)) if args.inputs else None
    res = run_all(args.seed, inputs, args.probe)
    np.savez(args.out, **res)
    verdict = check(res)
    print(json.dumps(verdict, indent=1))
    return 1 if any(verdict.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
