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

# $name, $name.k, or ${name} where letters follow (the N of "m64n${N}k16")
_OPERAND_RE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*)(?:\.(\d+))?)")


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


def operand_count(spec: InstructionSpec, op: Operand, shape=None) -> int:
    """Registers of ``op``; for a shape-variable operand, at the shape value ``shape``."""
    if not op.variable:
        return op.count
    if shape is None:
        raise IntrinsicUsageError(f"{spec.name}: operand '{op.name}' needs a shape value")
    return shape // spec.shape_var.divisor


def _return_type(spec: InstructionSpec, shape=None):
    outs = []
    for op in spec.outputs:
        n = operand_count(spec, op, shape)
        outs.append(op.type if n == 1 and not op.variable else types.UniTuple(op.type, n))
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


def _variable_length(spec, op: Operand, ty):
    """The shape value a tuple argument of a shape-variable operand selects."""
    var = spec.shape_var
    allowed = sorted({v // var.divisor for v in var.values})
    length = len(ty) if isinstance(ty, types.BaseTuple) else None
    shape = var.value_for(length) if length is not None else None
    if shape is None:
        raise _usage(
            spec, f"argument '{op.name}' must be a tuple of {var.describe()} x {op.type} "
            f"({var.name} in {_ranges(var.values)}: lengths {_ranges(allowed)}), got {ty}")
    return shape


def _ranges(values) -> str:
    """``8..256 step 8`` for an arithmetic run, else the list."""
    v = list(values)
    if len(v) > 2 and all(b - a == v[1] - v[0] for a, b in zip(v, v[1:])):
        return f"{v[0]}..{v[-1]} step {v[1] - v[0]}"
    return ", ".join(map(str, v))


def _type_operand(spec, op: Operand, ty):
    kind = "an integer" if isinstance(op.type, types.Integer) else "a number"
    if op.variable:
        count = operand_count(spec, op, _variable_length(spec, op, ty))
        for i, elt in enumerate(ty):
            if not _scalar_ok(op, elt):
                raise _usage(spec, f"argument '{op.name}[{i}]' must be {kind} ({op.type}), got {elt}")
        return types.UniTuple(op.type, count)
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
        shape = None
        for op in spec.inputs:
            if isinstance(op, Operand):
                ty = next(it)
                if op.variable:
                    value = _variable_length(spec, op, ty)
                    if shape is not None and value != shape:
                        raise _usage(spec, f"argument '{op.name}' selects {spec.shape_var.name}="
                                     f"{value}, but an earlier argument selected {shape}")
                    shape = value
                sig_args.append(_type_operand(spec, op, ty))
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
        return _return_type(spec, shape)(*sig_args), codegen

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
        name, part = m.group(1) or m.group(2), m.group(3)
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


def _shape_of_call(spec: InstructionSpec, sig):
    """The shape value a typed call selected (None for specs without a shape variable)."""
    if spec.shape_var is None:
        return None
    k = 0
    for op in spec.inputs:
        if isinstance(op, Operand) and op.variable:
            return spec.shape_var.value_for(len(sig.args[k]))
        k += 2 if isinstance(op, Element) else 1
    raise IntrinsicUsageError(f"{spec.name}: no argument gives {spec.shape_var.name}")


def _make_codegen(spec: InstructionSpec):
    def codegen(context, builder, sig, args):
        check_target(spec)
        shape = _shape_of_call(spec, sig)
        numbers, consts = {}, {}
        if shape is not None:
            consts[spec.shape_var.name] = shape
        constraints, values, out_types = [], [], []
        n = 0
        for op in spec.outputs:
            count = operand_count(spec, op, shape)
            numbers[op.name] = (list(range(n, n + count)), op.braced or op.variable)
            n += count
            constraints += ["=" + op.constraint] * count
            out_types += [_llvm_type(context, op.type)] * count
        argi = 0
        for op in spec.inputs:
            if isinstance(op, Operand):
                ty, val = sig.args[argi], args[argi]
                argi += 1
                count = operand_count(spec, op, shape)
                if count == 1 and not isinstance(ty, types.BaseTuple):
                    vals = [context.cast(builder, val, ty, op.type)]
                else:
                    vals = [
                        context.cast(builder, builder.extract_value(val, i), ty[i], op.type)
                        for i in range(count)
                    ]
                values += vals
                if op.tied_to:
                    # Read-modify-write ("+f" in CUDA C): the input is bound to the output's
                    # registers by matching constraints; it still takes operand numbers, but
                    # the template names the registers through the output.
                    regs = numbers[op.tied_to][0]
                    numbers[op.name] = numbers[op.tied_to]
                    constraints += [str(r) for r in regs]
                else:
                    numbers[op.name] = (list(range(n, n + count)), op.braced or op.variable)
                    constraints += [op.constraint] * count
                n += count
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
    if nregs == 1 and not isinstance(rettype, types.BaseTuple):
        return res
    regs = [res] if nregs == 1 else [builder.extract_value(res, i) for i in range(nregs)]
    if len(spec.outputs) == 1:
        return context.make_tuple(builder, rettype, regs)
    parts, k = [], 0
    for ty in rettype:
        if isinstance(ty, types.BaseTuple):
            parts.append(context.make_tuple(builder, ty, regs[k : k + len(ty)]))
            k += len(ty)
        else:
            parts.append(regs[k])
            k += 1
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


def _check_spec(spec: InstructionSpec):
    """Structural errors of a spec, raised when it is built rather than when a kernel uses it."""
    outs = {op.name: op for op in spec.outputs}
    variable = [op for op in spec.outputs + spec.inputs if isinstance(op, Operand) and op.variable]
    if variable and spec.shape_var is None:
        raise IntrinsicUsageError(f"{spec.name}: operands {[o.name for o in variable]} have a "
                                  "variable count but the spec declares no shape_var")
    if any(op.count != spec.shape_var.name for op in variable):
        raise IntrinsicUsageError(f"{spec.name}: variable counts must name {spec.shape_var.name!r}")
    if variable and not any(op.variable for op in spec.inputs if isinstance(op, Operand)):
        raise IntrinsicUsageError(f"{spec.name}: no input operand gives {spec.shape_var.name}")
    for op in spec.inputs:
        if isinstance(op, Operand) and op.tied_to:
            out = outs.get(op.tied_to)
            if out is None or out.type != op.type or out.count != op.count:
                raise IntrinsicUsageError(
                    f"{spec.name}: input '{op.name}' is tied to '{op.tied_to}', which must be an "
                    "output of the same type and count")


def build(spec: InstructionSpec) -> PtxIntrinsic:
    """Generate the intrinsic for ``spec`` and register it under ``spec.name``."""
    with _build_lock:
        if spec.name in REGISTRY:
            if REGISTRY[spec.name].spec == spec:
                return REGISTRY[spec.name]
            raise IntrinsicUsageError(
                f"define: an intrinsic named '{spec.name}' already exists with another spec"
            )
        _check_spec(spec)
        codegen = _make_codegen(spec)
        typer = _make_typer(spec, codegen)
        obj = PtxIntrinsic(
            spec.name, typer, prefer_literal=bool(spec.consts), spec=spec, target="cuda"
        )
        obj._register()
        obj.__doc__ = spec.doc
        REGISTRY[spec.name] = obj
        return obj
