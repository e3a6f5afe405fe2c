"""`ops_of(op)`: the ops `op.walk()` yields, as a list built in one call.

xDSL's `Operation.walk` is a chain of nested generators (op, region, block, op, ...), so each op it yields
passes through every enclosing generator: about 1 us per op on a kernel's module, two to three times what
a plain recursive loop costs, and passes walk whole modules a dozen times per compile
(benchmarks/compile_time.py). Where a pass reads every op of a module (an analysis, or a snapshot it
mutates afterwards: `list(func.walk())`), `ops_of` gives the same ops in the same order (pre-order, regions
and blocks first to last); a loop that changes the IR while `walk()` is still running may see a different
set of ops, so such loops keep xDSL's walk.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation


def _add_nested(op: Operation, out: list[Operation]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                out.append(child)
                if child.regions:
                    _add_nested(child, out)


def ops_of(op: Operation) -> list[Operation]:
    """Return `list(op.walk())`: `op`, then every op nested in it, in pre-order."""
    out = [op]
    if op.regions:
        _add_nested(op, out)
    return out


def block_ops_of(block: Block) -> list[Operation]:
    """Return `list(block.walk())`: every op of `block` and the ops nested in them, in pre-order."""
    out: list[Operation] = []
    for child in block.ops:
        out.append(child)
        if child.regions:
            _add_nested(child, out)
    return out


__all__ = ["block_ops_of", "ops_of"]
