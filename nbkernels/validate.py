"""``python -m nbkernels validate --as sm_80``: run the code an older GPU would receive on the newer
GPU present, and check it against float64 references.

Every kernel is compiled by NVVM for the target arch (``.target sm_80``: only the instructions
an A100 has) and handed to the driver as PTX, which JIT-compiles it for this GPU, as the driver
of a machine would for a package that shipped only ``compute_80`` PTX (``launch.driver_jit``).
Where this driver cannot read the PTX ISA that NVVM writes, nvJitLink compiles it for this GPU
instead and the report says so. On an H100/H200 this exercises the sm_80-class variants an A100
would run; what it cannot show is the A100's own timing or its smaller shared memory.

Cases come from each kernel family's ``validate_cases(target)`` (see :mod:`nbkernels.aot`): an
iterable of objects with ``name``, ``dtype`` and ``run(rng) -> (passed, error, tolerance,
detail)``. A family without that function is skipped.
"""
from __future__ import annotations

import fnmatch
import re
import time

from .arch import Arch


def _target_images(target: Arch) -> list:
    """(kernel, .target, .version) of every image compiled in this process for ``target``."""
    from . import runner

    out = []
    for (_, _, arch), (key, image, _, _) in list(runner._built.items()):
        if arch != str(target):
            continue
        text = image.decode(errors="replace") if isinstance(image, bytes) else ""
        tgt = re.search(r"^\s*\.target\s+(\S+)", text, re.M)
        ver = re.search(r"^\s*\.version\s+(\S+)", text, re.M)
        out.append((key, tgt.group(1) if tgt else "not PTX", ver.group(1) if ver else "?"))
    return out


def add_arguments(ap) -> None:
    ap.add_argument("--as", dest="target", required=True,
                    help="the arch whose code to run, e.g. sm_80 (must be older than this GPU)")
    ap.add_argument("--only", default=None, help="comma-separated case-name patterns (fnmatch)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")


def main(args) -> int:
    import numpy as np

    from . import compat, doctor
    from .aot import families
    from .arch import device_arch

    target = Arch.parse(args.target)
    facts = doctor.collect(packages=False)
    gpu = device_arch()
    if gpu is None:
        print("nbkernels validate: no GPU here; validate runs code on a GPU "
              "(see `python -m nbkernels doctor`)")
        return 2
    if not gpu.satisfies(target) or (target.suffix and target != gpu):
        print(f"nbkernels validate: code for {target} cannot run on this GPU ({gpu}); pick an "
              f"arch no newer than {gpu.major}.{gpu.minor}")
        return 2
    only = [p.strip() for p in args.only.split(",")] if args.only else None
    cases = [c for fam in families() if hasattr(fam, "validate_cases")
             for c in fam.validate_cases(target)
             if not only or any(fnmatch.fnmatch(c.name, p) for p in only)]
    g = facts.gpus[0] if facts.gpus else None
    print(f"nbkernels validate --as {target}: on {g.name if g else '?'} ({gpu}), driver CUDA "
          f"{compat.vstr(facts.driver_cuda)}, NVVM {compat.vstr(facts.nvvm_release)} writing PTX "
          f"ISA {compat.vstr(facts.nvvm_ptx_isa)}; PTX for {target} JIT-compiled by the driver")
    rng = np.random.default_rng(args.seed)
    failed = 0
    print(f"  {'case':34s} {'dtype':9s} {'rel. error':>11s} {'tolerance':>9s} {'time':>6s}  result")
    for case in cases:
        t0 = time.perf_counter()
        try:
            ok, err, tol, detail = case.run(rng)
        except Exception as e:  # a case that cannot run is a failure of that case, not of all
            ok, err, tol, detail = False, float("nan"), float("nan"), f"{type(e).__name__}: {e}"
        failed += not ok
        print(f"  {case.name:34s} {case.dtype:9s} {err:11.3g} {tol:9.1g} "
              f"{time.perf_counter() - t0:5.1f}s  {'pass' if ok else 'FAIL: ' + detail[:300]}")
    images = _target_images(target)
    wrong = [k for k, tgt, _ in images if tgt != str(target)]
    print(f"\n{len(images)} kernels built for {target}: .target "
          f"{', '.join(sorted({t for _, t, _ in images})) or '-'}, PTX ISA "
          f"{', '.join(sorted({v for _, _, v in images})) or '-'}")
    for key, how in compat.BRIDGED.items():
        print(f"  bridged: {key}: {how}")
    if wrong:
        print(f"FAILED: {len(wrong)} kernels were not PTX for {target}: {wrong[:3]}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed or wrong or not images else 0
