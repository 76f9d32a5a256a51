"""``python -m nbkernels compile --arch sm_75,sm_80,... [--out DIR]``: every kernel variant of the
package built for each named arch on a machine without a GPU.

Each variant is compiled to PTX by numba-cuda's NVVM for the arch, assembled to a cubin (ptxas,
or nvJitLink where ptxas is missing or older than NVVM), and its SASS read back. The table per
arch gives registers, shared memory (static + dynamic), spills, stack and the tensor-core
instruction found in the SASS. The command fails, naming the variant, when one does not compile
or assemble, spills (a variant marked ``spills_outside_loops``: spills inside a loop of its
SASS), uses a stack frame inside a loop (an array left in local memory), or lacks the
tensor-core instruction it is built around. A variant whose ``min_arch`` the arch does not
satisfy is "n/a for this arch", not a failure.

Kernel families plug in through :data:`FAMILIES`, a table of module names. A family module
offers:

``aot_variants(arch: Arch) -> Iterable[Variant]``
    its whole catalogue (this module decides n/a from each ``min_arch``); ``arch`` lets a family
    size a variant for the arch (e.g. its shared-memory limit).
``dispatch(arch: Arch | None) -> Iterable[(operation, dtype, variant, why)]``
    what its public operations select on a device of ``arch`` (None: no GPU); ``doctor`` prints it.
``validate_cases(target: Arch) -> Iterable[case]`` (optional)
    runs for ``validate --as``; see :mod:`nbkernels.validate`.
"""
from __future__ import annotations

import fnmatch
import importlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .arch import Arch

#: Kernel families, in report order. Add a module name here to add a family.
FAMILIES = ["nbkernels.matmul.aot", "nbkernels.rows.aot"]

#: SASS mnemonics of tensor-core instructions (mma.sync -> HMMA/IMMA/DMMA, wgmma -> *GMMA).
TENSOR_OPS = ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA",
              "UTCIMMA", "UTCQMMA", "UTCOMMA")


@dataclass(frozen=True)
class Variant:
    """One kernel as compile builds it.

    ``build(arch)`` is picklable (a module-level function or a functools.partial of one), runs
    in a worker process and returns ``(pyfunc, numba signature, launch_bounds,
    dynamic_smem_bytes)``.
    ``tensor_op`` is the SASS mnemonic the kernel must contain ("HMMA", "IMMA"), None for SIMT.
    ``spills_outside_loops``: spills are accepted if no spill instruction sits inside a loop
    of the SASS (a variant measured faster with a few set-up/epilogue spills than the
    spill-free alternative; see its family's notes); without it any spill fails.
    """

    name: str
    min_arch: str
    build: Callable
    tensor_op: str | None = None
    spills_outside_loops: bool = False


@dataclass
class Row:
    variant: str
    arch: str
    status: str = "ok"  # "ok", "n/a", "FAIL", "ptx only"
    registers: int | None = None
    static_smem: int | None = None
    dynamic_smem: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    stack: int | None = None
    barriers: int | None = None  # named barriers a block takes (the assembler's count)
    tensor_ops: list = field(default_factory=list)
    seconds: float = 0.0
    problems: list = field(default_factory=list)


def families(names=None) -> list:
    return [importlib.import_module(n) for n in (names or FAMILIES)]


def verdict(row: Row, tensor_op: str | None, loop_spills=False, loop_locals=None,
            barriers: int | None = None) -> list:
    """What makes an assembled variant a failure: spills, local memory inside a loop, a
    missing tensor-core instruction, or more named barriers than the kernel declares.
    ``loop_spills`` False: any spill fails; a count (a variant
    that accepts spills outside loops): spill instructions inside a loop fail it, none do not;
    None: its SASS could not be read, so where its spills sit is unknown and they fail it.
    ``loop_locals``: local-memory instructions inside loops (None: SASS not read). Without
    spills, a stack frame with any of them is an array the compiler could not keep in
    registers, read and written every iteration (rows/layer_norm on sm_75 had one unnoticed:
    perf-notes r13); a stack frame used outside loops only passes. ``barriers``: the
    kernel's ``nbk_barriers``, which the row kernels' residency estimate counts (perf-notes
    r37; None: not checked)."""
    problems = []
    spilled = (row.spill_stores or 0) or (row.spill_loads or 0)
    accepted = loop_spills is not False and loop_spills == 0  # (False == 0 in Python)
    if spilled and not accepted:
        where = "" if loop_spills is False else \
            " (SASS not read: cannot tell where)" if loop_spills is None else " inside a loop"
        problems.append(f"spills ({row.spill_stores} B stores, {row.spill_loads} B loads){where}")
    if not spilled and row.stack and loop_locals:
        problems.append(f"local memory inside a loop ({loop_locals} LDL/STL, a {row.stack} B "
                        f"stack frame): an array not kept in registers")
    if tensor_op and row.tensor_ops is not None and \
            not any(op.split(".")[0] == tensor_op for op in row.tensor_ops):
        problems.append(f"no {tensor_op} instruction in the SASS")
    if barriers is not None and (row.barriers or 0) > barriers:
        problems.append(f"uses {row.barriers} named barriers a block, declares {barriers} "
                        f"(nbk_barriers): its resident blocks would be overestimated")
    return problems


def _assemble_nvjitlink(ptx: str, arch: Arch):
    """A toolchain.Assembled through nvJitLink (its verbose log is ptxas's -v output)."""
    from cuda.bindings import nvjitlink as nj

    from . import toolchain
    from .errors import ToolchainError

    h = nj.create(2, [f"-arch={arch}", "-verbose"])
    try:
        data = ptx.encode()
        try:
            nj.add_data(h, nj.InputType.PTX, data, len(data), "kernel.ptx")
            nj.complete(h)
        except Exception as e:
            log = bytearray(nj.get_error_log_size(h))
            nj.get_error_log(h, log)
            raise ToolchainError(
                f"nvJitLink failed for {arch}: {e}\n{log.decode(errors='replace')}") from e
        cubin = bytearray(nj.get_linked_cubin_size(h))
        nj.get_linked_cubin(h, cubin)
        log = bytearray(nj.get_info_log_size(h))
        nj.get_info_log(h, log)
    finally:
        nj.destroy(h)
    text = log.decode(errors="replace")
    num = toolchain._first_int
    return toolchain.Assembled(arch, bytes(cubin), num("registers", text), num("shared", text),
                               num("spill_st", text), num("spill_ld", text), num("stack", text),
                               text, num("barriers", text))


def shares_front_end(built_for: Arch, arch: Arch, needs=()) -> bool:
    """Whether numba's front end (typing, inlining, lowering to LLVM IR) of a kernel built for
    ``built_for`` may serve ``arch``: when ``arch`` offers all that ``built_for`` does, and
    answers alike each question the lowering asked of the target (``needs``, the archs passed
    to :func:`nbkernels.arch.target_satisfies`). The intrinsics' arch checks then pass for
    ``arch`` as they did for ``built_for``; numba-cuda's own lowering (0.30) compares the arch
    only with 5.3, 6.0 and 7.5, at or below the package's minimum. sm_90a's front end serves no
    other arch (its instructions are its own)."""
    return arch.satisfies(built_for) and \
        all(arch.satisfies(n) == built_for.satisfies(n) for n in needs)


def _ptx(pyfunc, sig, arch: Arch, bounds, front_ends: dict | None) -> str:
    """PTX of a kernel for ``arch``: through ``cuda.compile_ptx``, or NVVM on the LLVM IR of a
    front end already built in this process for an arch it may serve (:func:`shares_front_end`;
    ``front_ends`` is keyed by function, signature and launch bounds, and holds the front ends
    built for each key)."""
    from numba import cuda

    from .arch import reading_targets
    from .inlining import lean_inlining

    try:  # numba-cuda's own step under compile_ptx (private: a release without it builds alone)
        from numba.cuda.compiler import _compile_pyfunc_with_fixup
    except ImportError:
        front_ends = None
    if front_ends is None:
        with lean_inlining():
            return cuda.compile_ptx(pyfunc, sig, cc=arch.cc, launch_bounds=bounds)[0]
    built = front_ends.setdefault((id(pyfunc), repr(sig), repr(bounds)), [])
    lib = next((lib for _, lib, built_for, needs in built
                if shares_front_end(built_for, arch, needs)), None)
    if lib is None:
        with reading_targets() as needs, lean_inlining():
            # what cuda.compile_ptx passes to it (numba-cuda 0.30): a kernel, numba ABI, PTX
            lib, _ = _compile_pyfunc_with_fixup(pyfunc, sig, device=False, cc=arch.cc,
                                                abi="numba", launch_bounds=bounds, lto=False)
        # the function kept alive with it: its id stays its own
        built.append((pyfunc, lib, arch, tuple(needs)))
    codes = lib.get_asm_strs(cc=arch.cc)
    if len(codes) != 1:
        raise RuntimeError(f"NVVM gave {len(codes)} PTX modules, expected one")
    return codes[0]


def numbered_out(ptx: str) -> str:
    """``ptx`` with numba's per-compile numbering (the version in mangled names, the
    shared-memory symbol's counter) replaced by order of appearance: two compiles of one kernel
    in a process differ only there, so this is what a shared front end must reproduce."""
    seen = {}
    return re.sub(r"_ZN\w+|_cudapy_smem_\d+",
                  lambda m: seen.setdefault(m.group(0), f"SYM{len(seen)}"), ptx)


def compile_variants(v: Variant, arch_names, out_dir: str | None, assembler: str | None,
                     share: bool = True) -> list:
    """Build one variant for several archs (runs in a worker process): where ``v.build``
    gives the same function, signature and bounds for several archs, numba's front end runs
    once, for the lowest (:func:`shares_front_end`), and NVVM, the assembler and every check
    run per arch. ``share=False`` builds each arch from scratch."""
    front_ends = {} if share else None
    archs = sorted(arch_names, key=lambda a: (Arch.parse(a).major, Arch.parse(a).minor))
    # lowest first: the front end is typed (and its intrinsics checked) for the lowest arch
    return [compile_variant(v, a, out_dir, assembler, front_ends) for a in archs]


def compile_variant(v: Variant, arch_name: str, out_dir: str | None, assembler: str | None,
                    front_ends: dict | None = None) -> Row:
    """Build one variant for one arch (runs in a worker process)."""
    from . import launch, toolchain

    arch = Arch.parse(arch_name)
    row = Row(v.name, str(arch))
    t0 = time.perf_counter()
    stem = None
    if out_dir:
        stem = Path(out_dir) / str(arch) / v.name.replace("/", "__")
        stem.parent.mkdir(parents=True, exist_ok=True)
    try:
        pyfunc, sig, bounds, dyn = v.build(arch)
        row.dynamic_smem = dyn
        ptx = launch.entry_ptx(_ptx(pyfunc, sig, arch, bounds, front_ends), pyfunc, sig)
        if f".target {arch}" not in ptx:
            raise RuntimeError(f"the PTX does not say .target {arch}")
        if stem:
            stem.with_suffix(".ptx").write_text(ptx)
        if assembler is None:
            row.status, row.tensor_ops = "ptx only", None
            return row
        asm = toolchain.assemble(ptx, arch) if assembler == "ptxas" else \
            _assemble_nvjitlink(ptx, arch)
        row.registers, row.static_smem, row.stack = asm.registers, asm.shared_bytes, asm.stack_bytes
        row.spill_stores, row.spill_loads = asm.spill_stores, asm.spill_loads
        row.barriers = asm.barriers
        loop_spills, loop_locals = (None if v.spills_outside_loops else False), None
        if stem:
            stem.with_suffix(".cubin").write_bytes(asm.cubin)
        try:
            sass = toolchain.disassemble(asm.cubin)
            ops = toolchain.sass_opcodes(sass)
            row.tensor_ops = sorted({o for o in ops if o.split(".")[0] in TENSOR_OPS})
            loop_locals = toolchain.local_accesses_in_loops(sass)
            if v.spills_outside_loops:
                loop_spills = loop_locals
            if stem:
                stem.with_suffix(".sass").write_text(sass)
        except Exception as e:  # no nvdisasm: registers and spills still count
            row.tensor_ops = None
            row.problems.append(f"SASS not read: {e}")
        bad = verdict(row, v.tensor_op, loop_spills, loop_locals,
                      getattr(pyfunc, "nbk_barriers", None))
        if bad:
            row.status, row.problems = "FAIL", bad + row.problems
    except Exception as e:
        row.status = "FAIL"
        row.problems.insert(0, f"{type(e).__name__}: {str(e).strip()[:2000]}")
    finally:
        row.seconds = time.perf_counter() - t0
    return row


def pick_assembler(facts) -> tuple[str | None, str]:
    """ptxas when it reads NVVM's PTX ISA, else nvJitLink when that does, else ptxas (which then
    fails with its own message) or nothing (PTX only)."""
    from .compat import max_ptx_isa, vstr

    isa = facts.nvvm_ptx_isa or (0, 0)
    if facts.ptxas and max_ptx_isa(facts.ptxas) >= isa:
        return "ptxas", f"ptxas {vstr(facts.ptxas)} ({facts.ptxas_where})"
    if facts.nvjitlink and max_ptx_isa(facts.nvjitlink) >= isa:
        return "nvjitlink", f"nvJitLink {vstr(facts.nvjitlink)} ({facts.nvjitlink_where})"
    if facts.ptxas:
        return "ptxas", f"ptxas {vstr(facts.ptxas)}, older than NVVM: expect failures"
    return None, "no ptxas and no nvJitLink: PTX only"


def plan(archs, family_names=None, only=None):
    """[(variant, arch)] to build and [Row] that are n/a, in report order."""
    todo, na = [], []
    for arch in archs:
        for fam in families(family_names):
            for v in fam.aot_variants(arch):
                if only and not any(fnmatch.fnmatch(v.name, pat) for pat in only):
                    continue
                if arch.satisfies(Arch.parse(v.min_arch)):
                    todo.append((v, arch))
                else:
                    na.append(Row(v.name, str(arch), "n/a",
                                  problems=[f"n/a for this arch (needs {v.min_arch})"]))
    return todo, na


def run(archs, out_dir=None, jobs=None, family_names=None, only=None, assembler="auto",
        progress=True, share=True) -> list:
    """Build every variant for every arch in a process pool, one task per variant (its archs
    sharing numba's front end where they can, :func:`compile_variants`); the rows in report
    order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    todo, na = plan(archs, family_names, only)
    tasks = {}  # variant name -> (variant, [arch names]) in plan order
    for v, a in todo:
        tasks.setdefault(v.name, (v, []))[1].append(str(a))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks) or 1))
    rows = list(na)
    # spawn: workers must not inherit a parent's CUDA context or numba state.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        futs = [pool.submit(compile_variants, v, names, out_dir, assembler, share)
                for v, names in tasks.values()]
        it = as_completed(futs)
        if progress:
            from tqdm import tqdm

            it = tqdm(it, total=len(futs), desc="compile", unit="variant")
        for fut in it:
            rows.extend(fut.result())
    order = {(v.name, str(a)): i for i, (v, a) in enumerate(todo)}
    return sorted(rows, key=lambda r: (archs.index(Arch.parse(r.arch)),
                                       order.get((r.variant, r.arch), -1), r.variant))


def table(rows, archs) -> str:
    lines = []
    for arch in archs:
        lines.append(f"\n{arch}")
        lines.append(f"  {'variant':28s} {'regs':>4s} {'smem (static+dynamic)':>22s} "
                     f"{'spills':>7s} {'stack':>5s}  {'tensor op':24s} {'time':>5s}  status")
        for r in (r for r in rows if r.arch == str(arch)):
            if r.status == "n/a":
                lines.append(f"  {r.variant:28s} {'':>4s} {'':>22s} {'':>7s} {'':>5s}  {'':24s} "
                             f"{'':>5s}  {r.problems[0]}")
                continue
            smem = f"{r.static_smem}+{r.dynamic_smem}" if r.static_smem is not None else "-"
            spills = f"{(r.spill_stores or 0) + (r.spill_loads or 0)}" if r.registers else "-"
            ops = ",".join(r.tensor_ops) if r.tensor_ops else ("-" if r.tensor_ops == [] else "?")
            lines.append(f"  {r.variant:28s} {r.registers if r.registers else '-':>4} "
                         f"{smem:>22s} {spills:>7s} {r.stack if r.stack is not None else '-':>5}  "
                         f"{ops[:24]:24s} {r.seconds:4.0f}s  {r.status}")
            for p in r.problems:
                lines.append(f"      {r.variant} on {r.arch}: {p.splitlines()[0][:300]}")
    return "\n".join(lines)


def add_arguments(ap) -> None:
    ap.add_argument("--arch", required=True,
                    help="comma-separated archs, e.g. sm_75,sm_80,sm_86,sm_89,sm_90a")
    ap.add_argument("--out", default="build/nbkernels-aot",
                    help="folder for <arch>/<variant>.ptx/.cubin/.sass and report.json")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPUs)")
    ap.add_argument("--only", default=None, help="comma-separated name patterns (fnmatch)")
    ap.add_argument("--family", action="append", default=None,
                    help="a family module to build instead of the package's table (repeatable)")
    ap.add_argument("--assembler", choices=("auto", "ptxas", "nvjitlink", "none"), default="auto")
    ap.add_argument("--list", action="store_true", help="list the variants per arch and stop")
    ap.add_argument("--separate", action="store_true",
                    help="run numba's front end once per arch (slower; by default a kernel "
                         "built alike for several archs is typed and lowered once, for the "
                         "lowest: the PTX is the same)")


def main(args) -> int:
    from . import doctor

    archs = [Arch.parse(a) for a in args.arch.split(",") if a.strip()]
    only = [p.strip() for p in args.only.split(",")] if args.only else None
    if args.list:
        todo, na = plan(archs, args.family, only)
        for v, a in todo:
            print(f"{a}  {v.name}")
        for r in na:
            print(f"{r.arch}  {r.variant}  ({r.problems[0]})")
        return 0
    facts = doctor.collect(packages=False)
    if args.assembler == "auto":
        assembler, how = pick_assembler(facts)
    else:
        assembler = None if args.assembler == "none" else args.assembler
        how = args.assembler
    from .compat import vstr

    print(f"nbkernels compile: NVVM {vstr(facts.nvvm_release)} (PTX ISA "
          f"{vstr(facts.nvvm_ptx_isa)}), assembler: {how}; archs {', '.join(map(str, archs))}; "
          f"output in {os.path.abspath(args.out)}")
    t0 = time.perf_counter()
    rows = run(archs, args.out, args.jobs, args.family, only, assembler,
               share=not args.separate)
    wall = time.perf_counter() - t0
    print(table(rows, archs))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "report.json").write_text(json.dumps(
        {"archs": [str(a) for a in archs], "assembler": how, "seconds": wall,
         "rows": [r.__dict__ for r in rows]}, indent=1))
    failed = [r for r in rows if r.status == "FAIL"]
    built = sum(r.status != "n/a" for r in rows)
    print(f"\n{built} builds, {sum(r.status == 'n/a' for r in rows)} n/a, {len(failed)} failed "
          f"in {wall:.0f} s")
    for r in failed:
        print(f"FAILED: {r.variant} for {r.arch}: {r.problems[0].splitlines()[0][:300]}")
    if assembler is None and args.assembler == "auto":
        print("nothing could assemble the PTX (install ptxas or nvJitLink, see `nbkernels "
              "doctor`); pass --assembler none to accept PTX only")
        return 1
    return 1 if failed else 0
