"""`clone_op(op)`: xDSL's `op.clone()` in one pass over the ops.

`Operation.clone` builds each op with empty operands, fills its regions block by block, then walks the original
and the copy side by side (a nested-generator walk per region level) and sets every op's operands a second
time; with its per-op generic steps that was about 20 us per op, 4 % of a compile
(benchmarks/compile_time.py: the compile driver keeps a copy of the tt module for `.asm` and for fitting).
`clone_op` makes each op once, with its operands mapped as it goes; only an op that uses a value defined
later in the walk (a block further down a CFG region) gets its operands set again at the end, as xDSL does
for every op. The copy is the same as `op.clone()`'s: the same op classes, operands, result types and name
hints, properties and attributes (shallow copies), locations, successors, block arguments (types, locations,
name hints) and nesting; tests/transforms/test_clone.py compares both on compiled kernels.
"""

from __future__ import annotations

from typing import TypeVar

from xdsl.ir import Block, Operation, Region, SSAValue

from mtia_xdsl.utils.xdsl_speed import init_operation

OpT = TypeVar("OpT", bound=Operation)


class _Cloner:
    def __init__(self, values: dict[SSAValue, SSAValue]) -> None:
        self.values = values
        self.blocks: dict[Block, Block] = {}
        self.copies: list[tuple[Operation, Operation]] = []
        """(copy, original) of every op copied, in pre-order."""
        self.forward = False
        """Whether an op used a value defined later in the walk."""

    def op(self, op: Operation) -> Operation:
        values = self.values
        old_operands = op._operands  # pyright: ignore[reportPrivateUsage]  (the tuple `op.operands` wraps)
        operands = [values.get(v, v) for v in old_operands]
        if not self.forward and any(v not in values for v in old_operands):
            self.forward = True  # or a value from outside `op`: `finish` sets every op's operands again
        copy = type(op).__new__(type(op))  # as `Operation.create`, with its `__init__` below
        init_operation(
            copy,
            operands,
            [r.type for r in op.results],
            op.properties.copy(),
            op.attributes.copy(),
            op.location,
            [self.blocks.get(b, b) for b in op._successors],  # pyright: ignore[reportPrivateUsage]
            [Region() for _ in op.regions],
        )
        self.copies.append((copy, op))
        for old, new in zip(op.results, copy.results, strict=True):
            values[old] = new
            if old.name_hint is not None:
                new.name_hint = old.name_hint
        for region, new_region in zip(op.regions, copy.regions, strict=True):
            self.region(region, new_region)
        return copy

    def region(self, region: Region, dest: Region) -> None:
        new_blocks: list[Block] = []
        for block in region.blocks:  # every block first: branches may target a later one
            new = Block(arg_types=[a.type for a in block.args])
            for old_arg, new_arg in zip(block.args, new.args, strict=True):
                new_arg.location = old_arg.location
                if old_arg.name_hint is not None:
                    new_arg.name_hint = old_arg.name_hint
                self.values[old_arg] = new_arg
            self.blocks[block] = new
            new_blocks.append(new)
        dest.add_block(new_blocks)
        for block, new in zip(region.blocks, new_blocks, strict=True):
            for child in block.ops:
                new.add_op(self.op(child))

    def finish(self) -> None:
        """After a forward use, set every copy's operands again in pre-order, as `Operation.clone` sets them
        (so each value's use list is in the same order)."""
        if not self.forward:
            return
        for copy, _ in self.copies:
            copy.operands = ()
        values = self.values
        for copy, op in self.copies:
            copy.operands = [values.get(v, v) for v in op.operands]


def clone_op(op: OpT, value_mapper: dict[SSAValue, SSAValue] | None = None) -> OpT:
    """Return a deep copy of `op` (its regions and the ops in them), as `op.clone(value_mapper)` does.

    `value_mapper` (old value -> new value) maps operands defined outside `op` and receives the mapping of
    every value `op` and its regions define.
    """
    cloner = _Cloner(value_mapper if value_mapper is not None else {})
    copy = cloner.op(op)
    cloner.finish()
    return copy  # type: ignore[return-value]


__all__ = ["clone_op"]
