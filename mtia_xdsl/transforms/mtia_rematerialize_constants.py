"""mtia-rematerialize-constants: a constant tile is filled again right before each op that reads it.

Canonicalization hoists constants to the top of the function and cse merges equal ones, so the zero tile
every `tl.dot` of a kernel starts from, or a loop's initial accumulator, is one engine value alive from the
function's entry to its last reader: a CB ID and its LS bytes through the whole kernel. This pass gives
each op that reads a constant tile (an engine command with no tensor operand whose body only yields
constants or `tt.make_range`s: `tl.arange(0, BLOCK)` made once before a loop held a CB ID through it) its
own copy of that command, placed right before it, so each copy's CB lives from the fill
to its one reader. Like a register allocator's rematerialization, it trades work for room: one fill
command per reader, run as often as the reader (a reader in a loop fills every iteration).

Run on the tensor-level program after convert-tt-to-mtia and cse (which would merge the copies again),
before mtia-cb-bufferize. The fitting driver (mtia_xdsl/fit.py) applies it when a kernel's CBs do not
fit as written; compile option `rematerialize_constants=True` always does.
Example: mtia-opt k.mlir -p mtia-rematerialize-constants
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mtia_xdsl.dialects import mtia, tt
from mtia_xdsl.transforms.arith_ops import arith
from mtia_xdsl.utils.walk import ops_of


def is_constant_tile(op: Operation) -> bool:
    """True for an engine command that reads no tensor and yields only constants or ranges (a fill)."""
    if not isinstance(op, mtia.EngineComputeOp) or len(op.results) != 1 or op.outs:
        return False
    if any(isinstance(v.type, TensorType) for v in op.operands):
        return False
    body = list(op.body.block.ops)
    fills = all(isinstance(o, arith.ConstantOp | tt.MakeRangeOp) for o in body[:-1])
    return fills and isinstance(body[-1], mtia.YieldOp)


def rematerialize(op: Operation) -> int:
    """Give every op reading the constant tile `op` its own copy of `op`, right before it; erase `op`.

    Returns the number of copies made (0 when `op`'s one reader already follows it).
    """
    readers: list[Operation] = []
    for use in op.results[0].uses:
        if use.operation not in readers:
            readers.append(use.operation)
    if not readers or (len(readers) == 1 and op.next_op is readers[0]):
        return 0
    for reader in readers:
        copy = op.clone()
        reader.parent_block().insert_op_before(copy, reader)  # type: ignore[union-attr]
        for i, operand in enumerate(reader.operands):
            if operand is op.results[0]:
                reader.operands[i] = copy.results[0]
    Rewriter.erase_op(op)
    return len(readers)


@dataclass(frozen=True)
class MtiaRematerializeConstantsPass(ModulePass):
    """Fill constant tiles right before each reader instead of once for the whole kernel (module docstring)."""

    name = "mtia-rematerialize-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in [o for o in ops_of(op) if is_constant_tile(o)]:
            rematerialize(inner)
