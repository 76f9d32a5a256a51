"""Declarative description of one inline-PTX instruction.

An :class:`InstructionSpec` is data: the PTX template, its operands, the lowest
architecture and PTX ISA version, whether it touches memory or is warp-collective,
the SASS opcode it should assemble to, and a simulator implementation. The typing,
the lowering and the public callable are all generated from it by
:mod:`nbkernels.intrinsics.factory`; nothing is written by hand per instruction.

Template syntax: ``$name`` stands for an operand. A vector operand (``count > 1``)
expands to ``{$i, $j, ...}``, ``$name.k`` is its k-th register alone, and a
compile-time constant expands to its literal value. Literal braces and PTX
registers (``%r``) are written as they are.

One spec may also cover a family of shapes that differ only in a vector length
(``wgmma.m64nNk16`` for N = 8..256): its :class:`ShapeVar` names the shape parameter,
the vector operands that scale with it give ``count=<name>``, the value is read from
the length of the tuple passed at the call, and ``$<name>`` in the template is its value.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from numba import types

from ..arch import Arch

# LLVM inline-asm constraint letter per numba scalar type (PTX register class).
CONSTRAINTS = {
    types.uint16: "h",
    types.int16: "h",
    types.uint32: "r",
    types.int32: "r",
    types.uint64: "l",
    types.int64: "l",
    types.float32: "f",
    types.float64: "d",
}


@dataclass(frozen=True)
class ShapeVar:
    """A shape parameter read from the call: vector operands with ``count=name`` hold
    ``value // divisor`` registers, for each ``value`` in ``values``."""

    name: str
    values: tuple
    divisor: int = 1
    doc: str = ""

    def value_for(self, nregs: int):
        """The shape value whose operands hold ``nregs`` registers (None: no such shape)."""
        for v in self.values:
            if v // self.divisor == nregs:
                return v
        return None

    def describe(self) -> str:
        """The register count as the docs table writes it (``N/2``)."""
        return self.name if self.divisor == 1 else f"{self.name}/{self.divisor}"


@dataclass(frozen=True)
class Operand:
    """A register operand: an output the instruction produces or an input it reads.

    ``count > 1`` makes a vector operand, passed and returned as a tuple of ``count``;
    ``count="N"`` makes its length follow the spec's :class:`ShapeVar` ``N``.
    ``tied_to`` names an output this input shares its registers with (PTX read-modify-write
    operands such as wgmma's accumulator ``d``: "+f" in CUDA C).
    """

    name: str
    type: types.Type
    count: int | str = 1
    doc: str = ""
    braced: bool = False  # PTX vector operand: {..} even for one register (mma, ldmatrix)
    tied_to: str = ""

    @property
    def constraint(self) -> str:
        return CONSTRAINTS[self.type]

    @property
    def variable(self) -> bool:
        return isinstance(self.count, str)


@dataclass(frozen=True)
class Element:
    """An ``(array, index)`` pair lowered to the address of that element (a 64-bit register).

    ``dtypes`` restricts the array's element type (empty: any); ``contiguous`` asks for
    a C or F layout so that a multi-byte access beyond the element stays in the array.
    """

    name: str
    dtypes: tuple = ()
    doc: str = ""


@dataclass(frozen=True)
class Const:
    """A compile-time integer, written literally into the PTX (``wait_group(N)``)."""

    name: str
    allowed: tuple = ()  # empty: any value in [lo, hi]
    lo: int = 0
    hi: int = 2**31 - 1
    doc: str = ""

    def check(self, value) -> bool:
        if self.allowed:
            return value in self.allowed
        return self.lo <= value <= self.hi


@dataclass(frozen=True)
class InstructionSpec:
    """One instruction as data. See the module docstring for the template syntax."""

    name: str
    ptx: str
    outputs: tuple = ()
    inputs: tuple = ()  # Operand, Element and Const, in the Python call's order
    min_arch: Arch = Arch(7, 5)
    min_ptx: tuple = (6, 0)
    memory: bool = False  # reads or writes memory: side effect + ~{memory} clobber
    side_effect: bool = False  # has an effect besides its outputs (fences, waits)
    convergent: bool = False  # warp-collective: all lanes of the warp execute it
    sass: tuple = ()  # SASS opcodes (prefixes) the instruction assembles to, for tests
    simulate: Optional[Callable] = None
    warp_collective_sim: bool = False  # simulate() takes and returns one entry per lane
    # Threads one collective call gathers in the simulator: 32 (a warp) or 128 (a warpgroup).
    sim_group: int = 32
    # Name of the input holding a member mask: the simulated collective gathers only the
    # lanes it names (elect.sync), not the whole warp.
    sim_members: str = ""
    doc: str = ""
    family: str = ""
    shape_var: Optional[ShapeVar] = None
    mnemonic: str = ""  # for messages and docs when the template opens with helper code
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def ptx_name(self) -> str:
        """The mnemonic, for messages: ``mnemonic`` if given, else the template's first word."""
        if self.mnemonic:
            return self.mnemonic
        return self.ptx.strip().lstrip("{").split()[0].rstrip(";")

    @property
    def ptx_pattern(self) -> str:
        """A regex the emitted PTX must match: ``ptx_name`` with the shape variable as digits."""
        pattern = re.escape(self.ptx_name)
        if self.shape_var is not None:
            pattern = pattern.replace(re.escape(self.shape_var.name), r"\d+")
        return pattern

    @property
    def register_inputs(self):
        return tuple(op for op in self.inputs if isinstance(op, Operand))

    @property
    def consts(self):
        return tuple(op for op in self.inputs if isinstance(op, Const))
