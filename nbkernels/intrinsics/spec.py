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
"""
from __future__ import annotations

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
class Operand:
    """A register operand: an output the instruction produces or an input it reads.

    ``count > 1`` makes a vector operand, passed and returned as a tuple of ``count``.
    """

    name: str
    type: types.Type
    count: int = 1
    doc: str = ""
    braced: bool = False  # PTX vector operand: {..} even for one register (mma, ldmatrix)

    @property
    def constraint(self) -> str:
        return CONSTRAINTS[self.type]


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
    doc: str = ""
    family: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def ptx_name(self) -> str:
        """The mnemonic, for messages: the template's first word."""
        return self.ptx.strip().lstrip("{").split()[0].rstrip(";")

    @property
    def register_inputs(self):
        return tuple(op for op in self.inputs if isinstance(op, Operand))

    @property
    def consts(self):
        return tuple(op for op in self.inputs if isinstance(op, Const))
