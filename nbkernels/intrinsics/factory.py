"""Generates the typing, the lowering and the public callable of an intrinsic from its spec.

Every shipped instruction and every instruction a user declares with
:func:`nbkernels.intrinsics.define` goes through :func:`build`; no instruction
has hand-written lowering.
"""
from __future__ import annotations

import inspect
import re
import threading

from llvmlite import ir
from numba import types
from numba.cuda import cgutils
from numba.cuda.api_util import normalize_indices
from numba.cuda.extending import _Intrinsic

from ..arch import compile_target
from ..errors import ArchError, IntrinsicUsageError, PtxVersionError
from .spec import Element, InstructionSpec, Operand

#: Every intrinsic built so far, by public name (the shipped set and user definitions).
REGISTRY: dict[str, "PtxIntrinsic"] = {}

_OPERAND_RE = re.compile(r"\$([A-Za-z_]\w*)(?:\.(\d+))?")


# ---------------------------------------------------------------------------------------
# Python-level signature of an intrinsic
# ---------------------------------------------------------------------------------------
def python_params(spec: InstructionSpec) -> list[str]:
    """Parameter names of the public callable, in call order."""
    names = []
    for op in spec.inputs:
        if isinstance(op, Element):
            names += [op.name, op.name + "_index"]
        else:
            names.append(op.name)
    return names


def _return_type(spec: InstructionSpec):
    outs = [
        op.type if op.count == 1 else types.UniTuple(op.type, op.count) for op in spec.outputs
    ]
    if not outs:
        return types.void
    if len(outs) == 1:
        return outs[0]
    return types.Tuple(outs)


# ---------------------------------------------------------------------------------------
# Typing
# ---------------------------------------------------------------------------------------
def _usage(spec, msg):
    return IntrinsicUsageError(f"{spec.name}: {msg}")


def _scalar_ok(op: Operand, ty) -> bool:
    ty = types.unliteral(ty)
    if isinstance(op.type, types.Float):
        return isinstance(ty, (types.Float, types.Integer))
    return isinstance(ty, (types.Integer, types.Boolean))


def _type_operand(spec, op: Operand, ty):
    kind = "an integer" if isinstance(op.type, types.Integer) else "a number"
    if op.count == 1:
        if not _scalar_ok(op, ty):
            raise _usage(spec, f"argument '{op.name}' must be {kind} ({op.type}), got {ty}")
        return op.type
    if not isinstance(ty, types.BaseTuple) or len(ty) != op.count:
        raise _usage(
            spec, f"argument '{op.name}' must be a tuple of {op.count} x {op.type}, got {ty}"
        )
    for i, elt in enumerate(ty):
        if not _scalar_ok(op, elt):
            raise _usage(spec, f"argument '{op.name}[{i}]' must be {kind} ({op.type}), got {elt}")
    return types.UniTuple(op.type, op.count) if isinstance(ty, types.UniTuple) else ty


def _type_element(spec, op: Element, arr, idx):
    if not isinstance(arr, types.Array):
        raise _usage(spec, f"argument '{op.name}' must be an array, got {arr}")
    if op.dtypes and arr.dtype not in op.dtypes:
        want = ", ".join(str(d) for d in op.dtypes)
        raise _usage(spec, f"argument '{op.name}' must have dtype in ({want}), got {arr.dtype}")
    idx_u = types.unliteral(idx)
    if isinstance(idx_u, types.Integer):
        if arr.ndim != 1:
            raise _usage(
                spec, f"argument '{op.name}_index' must be a tuple of {arr.ndim} integers, got {idx}"
            )
    elif isinstance(idx_u, types.BaseTuple):
        if len(idx_u) != arr.ndim or not all(isinstance(t, types.Integer) for t in idx_u):
            raise _usage(
                spec, f"argument '{op.name}_index' must be {arr.ndim} integer(s), got {idx}"
            )
    else:
        raise _usage(spec, f"argument '{op.name}_index' must be an integer index, got {idx}")
    return arr, idx_u


def _make_typer(spec: InstructionSpec, codegen):
    params = python_params(spec)

    def typer(typingctx, *args):
        if len(args) != len(params):
            raise _usage(
                spec, f"takes {len(params)} argument(s) ({', '.join(params)}), got {len(args)}"
            )
        sig_args = []
        it = iter(args)
        for op in spec.inputs:
            if isinstance(op, Operand):
                sig_args.append(_type_operand(spec, op, next(it)))
            elif isinstance(op, Element):
                sig_args.extend(_type_element(spec, op, next(it), next(it)))
            else:
                ty = next(it)
                if not isinstance(ty, types.IntegerLiteral):
                    raise _usage(
                        spec,
                        f"argument '{op.name}' must be a compile-time constant integer, got {ty}",
                    )
                if not op.check(ty.literal_value):
                    allowed = op.allowed or f"[{op.lo}, {op.hi}]"
                    raise _usage(
                        spec, f"argument '{op.name}' must be one of {allowed}, got {ty.literal_value}"
                    )
                sig_args.append(ty)
        return _return_type(spec)(*sig_args), codegen

    typer.__name__ = spec.name
    typer.__qualname__ = spec.name
    typer.__doc__ = spec.doc
    typer.__signature__ = inspect.Signature(
        [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )
    return typer


# ---------------------------------------------------------------------------------------
# Lowering
# ---------------------------------------------------------------------------------------
_PTX_ISA_OF_NVVM = None


def nvvm_ptx_isa() -> tuple:
    """The PTX ISA version the NVVM in use writes into ``.version`` (probed once)."""
    global _PTX_ISA_OF_NVVM
    if _PTX_ISA_OF_NVVM is None:
        from numba import cuda

        def probe():
            pass

        ptx, _ = cuda.compile_ptx(probe, (), cc=(7, 5))
        m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
        _PTX_ISA_OF_NVVM = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return _PTX_ISA_OF_NVVM


# numba-cuda 0.30 needs CUDA 12.0 or newer, whose NVVM writes PTX ISA 8.0 at least, so
# instructions at or below this need no probe.
_PTX_FLOOR = (8, 0)


def check_target(spec: InstructionSpec):
    """Raise the nbkernels error for an instruction the current compile target lacks."""
    target = compile_target()
    if target is not None and not target.satisfies(spec.min_arch):
        hint = ""
        if spec.min_arch.suffix == "a":
            hint = f"compile with cc=({spec.min_arch.major}, {spec.min_arch.minor}, 'a')"
        raise ArchError(f"{spec.name} ({spec.ptx_name})", spec.min_arch, target, hint)
    if tuple(spec.min_ptx) > _PTX_FLOOR:
        have = nvvm_ptx_isa()
        if have < tuple(spec.min_ptx):
            need = ".".join(map(str, spec.min_ptx))
            raise PtxVersionError(
                f"{spec.name} ({spec.ptx_name}) needs PTX ISA {need} or newer, but the NVVM in "
                f"use writes PTX ISA {have[0]}.{have[1]}; install a newer CUDA toolkit "
                "(nbkernels[cu13])"
            )


def _llvm_type(context, numba_type):
    return context.get_value_type(numba_type)


def _element_pointer(context, builder, arrty, idxty, arr, idx):
    index_types, indices = normalize_indices(context, builder, idxty, idx, arrty, arrty.dtype)
    ary = context.make_array(arrty)(context, builder, value=arr)
    ptr = cgutils.get_item_pointer(context, builder, arrty, ary, indices, wraparound=False)
    return builder.ptrtoint(ptr, ir.IntType(64))


def render_template(spec: InstructionSpec, numbers: dict, consts: dict) -> str:
    """Substitute operand numbers and constants into the PTX template."""

    def sub(m):
        name, part = m.group(1), m.group(2)
        if name in consts:
            return str(consts[name])
        if name not in numbers:
            raise KeyError(f"{spec.name}: template names unknown operand ${name}")
        regs, braced = numbers[name]
        if part is not None:
            return f"${regs[int(part)]}"
        if len(regs) == 1 and not braced:
            return f"${regs[0]}"
        return "{" + ", ".join(f"${r}" for r in regs) + "}"

    return _OPERAND_RE.sub(sub, spec.ptx.replace("$$", "\0")).replace("\0", "$$")


def _make_codegen(spec: InstructionSpec):
    def codegen(context, builder, sig, args):
        check_target(spec)
        numbers, consts = {}, {}
        constraints, values, out_types = [], [], []
        n = 0
        for op in spec.outputs:
            numbers[op.name] = (list(range(n, n + op.count)), op.braced)
            n += op.count
            constraints += ["=" + op.constraint] * op.count
            out_types += [_llvm_type(context, op.type)] * op.count
        argi = 0
        for op in spec.inputs:
            if isinstance(op, Operand):
                ty, val = sig.args[argi], args[argi]
                argi += 1
                if op.count == 1:
                    vals = [context.cast(builder, val, ty, op.type)]
                else:
                    vals = [
                        context.cast(builder, builder.extract_value(val, i), ty[i], op.type)
                        for i in range(op.count)
                    ]
                numbers[op.name] = (list(range(n, n + op.count)), op.braced)
                n += op.count
                constraints += [op.constraint] * op.count
                values += vals
            elif isinstance(op, Element):
                addr = _element_pointer(
                    context, builder, sig.args[argi], sig.args[argi + 1], args[argi], args[argi + 1]
                )
                argi += 2
                numbers[op.name] = ([n], False)
                n += 1
                constraints.append("l")
                values.append(addr)
            else:
                consts[op.name] = sig.args[argi].literal_value
                argi += 1
        if spec.memory:
            constraints.append("~{memory}")
        text = render_template(spec, numbers, consts)
        if not out_types:
            ret = ir.VoidType()
        elif len(out_types) == 1:
            ret = out_types[0]
        else:
            ret = ir.LiteralStructType(out_types)
        fnty = ir.FunctionType(ret, [v.type for v in values])
        side_effect = spec.memory or spec.side_effect or not out_types
        asm = ir.InlineAsm(fnty, text, ",".join(constraints), side_effect=side_effect)
        attrs = ("convergent",) if spec.convergent else ()
        res = builder.call(asm, values, attrs=attrs)
        return _pack_result(context, builder, sig.return_type, spec, res, len(out_types))

    return codegen


def _pack_result(context, builder, rettype, spec, res, nregs):
    if nregs == 0:
        return context.get_dummy_value()
    if nregs == 1:
        return res
    regs = [builder.extract_value(res, i) for i in range(nregs)]
    if len(spec.outputs) == 1:
        return context.make_tuple(builder, rettype, regs)
    parts, k = [], 0
    for op, ty in zip(spec.outputs, rettype):
        if op.count == 1:
            parts.append(regs[k])
        else:
            parts.append(context.make_tuple(builder, ty, regs[k : k + op.count]))
        k += op.count
    return context.make_tuple(builder, rettype, parts)


# ---------------------------------------------------------------------------------------
# The public object
# ---------------------------------------------------------------------------------------
class PtxIntrinsic(_Intrinsic):
    """A numba-cuda intrinsic generated from an :class:`InstructionSpec`.

    Inside a ``@cuda.jit`` kernel it lowers to the spec's inline PTX. Inside a kernel run by
    numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) it runs the spec's simulator
    implementation. Anywhere else calling it is an error that says so.
    """

    def __init__(self, name, defn, prefer_literal=False, spec=None, **kwargs):
        super().__init__(name, defn, prefer_literal=prefer_literal, **kwargs)
        self.spec = spec if spec is not None else REGISTRY[name].spec

    def __call__(self, *args):
        from . import sim

        if sim.in_simulated_kernel():
            return sim.run(self.spec, args)
        raise IntrinsicUsageError(
            f"{self.spec.name} is a device intrinsic: call it inside a @cuda.jit kernel "
            "(did you forget @cuda.jit?), or set NUMBA_ENABLE_CUDASIM=1 to run that kernel "
            "in numba's simulator"
        )

    def __repr__(self):
        return f"<nbkernels intrinsic {self.spec.name}: {self.spec.ptx_name}, {self.spec.min_arch}+>"

    @classmethod
    def _rebuild(cls, uuid, name, defn):
        # Unpickling (numba's on-disk cache) finds the live intrinsic of the same name.
        try:
            return cls._memo[uuid]
        except KeyError:
            return REGISTRY[name]


_build_lock = threading.Lock()


def build(spec: InstructionSpec) -> PtxIntrinsic:
    """Generate the intrinsic for ``spec`` and register it under ``spec.name``."""
    with _build_lock:
        if spec.name in REGISTRY:
            if REGISTRY[spec.name].spec == spec:
                return REGISTRY[spec.name]
            raise IntrinsicUsageError(
                f"define: an intrinsic named '{spec.name}' already exists with another spec"
            )
        codegen = _make_codegen(spec)
        typer = _make_typer(spec, codegen)
        obj = PtxIntrinsic(
            spec.name, typer, prefer_literal=bool(spec.consts), spec=spec, target="cuda"
        )
        obj._register()
        obj.__doc__ = spec.doc
        REGISTRY[spec.name] = obj
        return obj
