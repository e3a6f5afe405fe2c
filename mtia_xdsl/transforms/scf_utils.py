"""Rebuilding scf.for with a different set of loop-carried values (xDSL ops cannot change results)."""

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mtia_xdsl.utils.locations import with_loc


def rebuild_for(loop: scf.ForOp, inits: Sequence[SSAValue], keep: Sequence[int]) -> scf.ForOp:
    """Replace `loop` by a loop carrying only the values at indices `keep`, and return it.

    `inits` has one init per carried body argument; the body and its yield may already carry more values
    than `loop.iter_args` (appended by the caller). Results of `loop` at kept indices are replaced by the
    new loop's; results and body arguments not kept must have no uses left, except by ops the caller
    erases next.
    """
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp) and len(inits) == len(body.args) - 1 == len(yield_op.operands)
    Rewriter.replace_op(yield_op, with_loc(scf.YieldOp(*[yield_op.operands[i] for i in keep]), yield_op))
    for i in reversed(range(len(inits))):
        if i not in keep:
            body.erase_arg(body.args[i + 1], safe_erase=False)
    region = loop.detach_region(loop.body)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [inits[i] for i in keep], region)
    new.location = loop.location
    Rewriter.insert_op(new, InsertPoint.before(loop))
    for j, i in enumerate(keep):
        if i < len(loop.results):
            loop.results[i].replace_all_uses_with(new.results[j])
    Rewriter.erase_op(loop, safe_erase=False)
    return new
