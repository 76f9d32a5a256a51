"""``define``: declare a new inline-PTX instruction in a few lines, with full validation."""
from __future__ import annotations

import re

from numba import types

from ..arch import Arch
from ..errors import IntrinsicUsageError
from .factory import build
from .spec import Const, Element, InstructionSpec, Operand

_TYPES = {
    "u16": types.uint16, "s16": types.int16, "u32": types.uint32, "s32": types.int32,
    "u64": types.uint64, "s64": types.int64, "f32": types.float32, "f64": types.float64,
}
_SHORT = re.compile(r"^(\w+):(\w+?)(?:x(\d+))?(?:\[(-?\d+)\.\.(-?\d+)\])?$")


def _operand(text, where):
    if isinstance(text, (Operand, Element, Const)):
        return text
    m = _SHORT.match(str(text).replace(" ", ""))
    if not m:
        raise IntrinsicUsageError(
            f"define: {where} entry {text!r} must look like 'a:u32', 'c:f32x4', "
            "'n:const[0..7]' or 'p:elem'"
        )
    name, kind, count, lo, hi = m.groups()
    if kind == "const":
        if lo is None:
            return Const(name)
        return Const(name, lo=int(lo), hi=int(hi))
    if kind == "elem":
        return Element(name)
    if kind not in _TYPES:
        raise IntrinsicUsageError(
            f"define: {where} entry {text!r} has type {kind!r}; expected one of {sorted(_TYPES)}"
        )
    return Operand(name, _TYPES[kind], int(count or 1))


def define(name, ptx, *, outputs=(), inputs=(), min_arch="sm_75", min_ptx=(6, 0),
           simulate=None, warp_collective=False, memory=False, side_effect=False, sass=(),
           doc=""):
    """Declare an instruction; returns the intrinsic, callable inside ``@cuda.jit`` kernels.

    ``outputs`` and ``inputs`` are ``Operand``/``Const``/``Element`` objects or short strings:
    ``"d:u32"``, ``"acc:f32x4"`` (a 4-tuple), ``"lut:const[0..255]"`` (compile-time
    integer), ``"p:elem"`` (an ``(array, index)`` pair lowered to the element's address).
    ``simulate`` runs under ``NUMBA_ENABLE_CUDASIM=1``: it takes the inputs and returns the
    outputs of one thread, or, with ``warp_collective=True``, takes a list of the 32 lanes'
    input tuples and returns the 32 lanes' outputs. Compiling a kernel that calls the
    instruction for an arch below ``min_arch`` raises :class:`nbkernels.ArchError`.
    """
    if not re.match(r"^[A-Za-z_]\w*$", name or ""):
        raise IntrinsicUsageError(f"define: name must be a Python identifier, got {name!r}")
    if not isinstance(ptx, str) or not ptx.strip():
        raise IntrinsicUsageError(f"define: ptx must be a non-empty PTX template, got {ptx!r}")
    outs = tuple(_operand(o, "outputs") for o in outputs)
    ins = tuple(_operand(i, "inputs") for i in inputs)
    if any(not isinstance(o, Operand) for o in outs):
        raise IntrinsicUsageError("define: outputs must be register operands such as 'd:u32'")
    names = [o.name for o in outs + ins]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise IntrinsicUsageError(f"define: operand names must be unique, got {sorted(dup)} twice")
    referenced = set(re.findall(r"\$([A-Za-z_]\w*)", ptx))
    missing = referenced - set(names)
    if missing:
        raise IntrinsicUsageError(
            f"define: template uses ${', $'.join(sorted(missing))}, which no operand declares"
        )
    spec = InstructionSpec(
        name=name, ptx=ptx, outputs=outs, inputs=ins, min_arch=Arch.parse(min_arch),
        min_ptx=tuple(min_ptx), memory=memory, side_effect=side_effect,
        convergent=warp_collective, sass=tuple(sass), simulate=simulate,
        warp_collective_sim=warp_collective, doc=doc, family="user",
    )
    return build(spec)
