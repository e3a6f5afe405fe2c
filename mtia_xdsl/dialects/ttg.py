"""ttg: the one TritonGPU op upstream's TTIR contains (`ttg.barrier`, from `tl.debug_barrier`).

Pinned: Triton 3.9.0. `addrSpace` is the i32 bit set of upstream's `AddrSpace` enum (local 1,
global_read 2, global_write 4, tensor_read 8, tensor_write 16; `all` is 31), printed as upstream does
(`ttg.barrier all`, `ttg.barrier local|global_read`). On MTIA a program runs on one PE in order, so the
barrier has nothing to wait for; it stays in the IR so our TTIR matches upstream's op for op.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I32, IntegerAttr
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Synchronize the threads of a program for the address spaces in `addrSpace` (a no-op on MTIA)."""

    name = "ttg.barrier"
    addr_space = prop_def(IntegerAttr[I32], prop_name="addrSpace")
    """Bit set: local 1, global_read 2, global_write 4, tensor_read 8, tensor_write 16."""

    FLAGS: ClassVar[tuple[tuple[str, int], ...]] = (
        ("local", 1),
        ("global_read", 2),
        ("global_write", 4),
        ("tensor_read", 8),
        ("tensor_write", 16),
    )
    ALL: ClassVar[int] = 31

    def __init__(self, addr_space: int = ALL) -> None:
        super().__init__(properties={"addrSpace": IntegerAttr(addr_space, 32)})

    def verify_(self) -> None:
        bits = self.addr_space.value.data
        if not 0 <= bits <= self.ALL:
            raise VerifyException(f"addrSpace {bits} is not a set of local|global_read|global_write|tensor_*")

    # Custom syntax: upstream prints the enum bit set as `all`, `none` or `a|b`; no declarative
    # directive prints an integer property as bit-flag keywords.
    def print(self, printer: Printer) -> None:
        bits = self.addr_space.value.data
        if bits == self.ALL:
            text = "all"
        elif bits == 0:
            text = "none"
        else:
            text = "|".join(name for name, bit in self.FLAGS if bits & bit)
        printer.print_string(f" {text}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> BarrierOp:
        names = {"all": cls.ALL, "none": 0, **dict(cls.FLAGS)}
        bits = 0
        while True:
            pos = parser.pos
            word = parser.parse_identifier()
            if word not in names:
                parser.raise_error(f"unknown barrier address space '{word}'; expected one of {sorted(names)}", pos)
            bits |= names[word]
            if parser.parse_optional_punctuation("|") is None:
                break
        op = cls(bits)
        attrs = parser.parse_optional_attr_dict()
        op.attributes.update(attrs)
        return op


TTG = Dialect("ttg", [BarrierOp], [])
