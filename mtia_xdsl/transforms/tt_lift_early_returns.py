"""tt-lift-early-returns: turn early `return` branches of kernels and helpers into structured scf.if.

Triton lowers `if cond: return` to `cf.cond_br` between blocks. The mtia passes and the machine's
command recording work on structured control flow, so this pass rewrites each function, until it is one
block:
- a block ending in `cf.br` to a block with no other predecessor and no arguments absorbs that block;
- a block ending in `cf.cond_br %c, ^t, ^f` where ^t and ^f are argument-free blocks that end in a
  `tt.return` (of the same types) and have no other predecessor becomes
  `%r = scf.if %c { ^t's ops; yield } else { ^f's ops; yield }` followed by `tt.return %r`.
Helpers made single-block this way (a helper `return`ing early from an `if`) are then inlined into their
callers, as tt-inline does for the others.

Raises: PassFailedException naming the kernel line when other unstructured control flow remains.
Example: mtia-opt k.mlir -p tt-lift-early-returns
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mtia_xdsl.dialects import tt
from mtia_xdsl.utils.locations import location_str, with_loc


def _single_predecessor(block: Block) -> bool:
    return len({use.operation for use in block.uses}) == 1


def _is_leaf(block: Block) -> bool:
    """Argument-free block with one predecessor, ending in a tt.return."""
    return not block.args and _single_predecessor(block) and isinstance(block.last_op, tt.ReturnOp)


def _returned_types(block: Block) -> list[Attribute]:
    return [v.type for v in block.last_op.operands]  # type: ignore[union-attr]


def _merge_straight_line(region: Region) -> bool:
    for block in region.blocks:
        term = block.last_op
        if isinstance(term, cf.BranchOp) and not term.operands:
            succ = term.successor
            if succ is not block and not succ.args and _single_predecessor(succ):
                Rewriter.erase_op(term)
                Rewriter.inline_block(succ, InsertPoint.at_end(block))
                return True
    return False


def _into_region(block: Block) -> Region:
    """Detach `block`, replacing its tt.return by an scf.yield of the same values, and wrap it in a region."""
    block.parent.detach_block(block)  # type: ignore[union-attr]
    ret = block.last_op
    assert isinstance(ret, tt.ReturnOp)
    Rewriter.replace_op(ret, with_loc(scf.YieldOp(*ret.operands), ret))
    return Region(block)


def _lift_diamond(region: Region) -> bool:
    for block in region.blocks:
        term = block.last_op
        if not isinstance(term, cf.ConditionalBranchOp) or term.then_arguments or term.else_arguments:
            continue
        then_b, else_b = term.then_block, term.else_block
        if then_b is else_b or not (_is_leaf(then_b) and _is_leaf(else_b)):
            continue
        types = _returned_types(then_b)
        if types != _returned_types(else_b):
            continue
        cond = term.cond
        Rewriter.erase_op(term)
        if_op = scf.IfOp(cond, types, _into_region(then_b), _into_region(else_b))
        if_op.location = term.location
        ret = tt.ReturnOp(*if_op.results)
        ret.location = term.location
        block.add_ops([if_op, ret])
        return True
    return False


def lift_early_returns(func: tt.FuncOp) -> None:
    """Rewrite `func` into a single block; see the module docstring.

    Raises: PassFailedException if unstructured control flow other than early returns remains.
    """
    region = func.body
    while len(region.blocks) > 1 and (_merge_straight_line(region) or _lift_diamond(region)):
        pass
    if len(region.blocks) > 1:
        where = location_str(region.blocks[0].last_op.location if region.blocks[0].last_op else func.location)
        raise PassFailedException(
            f"{where}: error: this control flow (branches between blocks other than an early return) is not "
            "supported yet; express it with if/else blocks that both reach the end of the kernel"
        )


@dataclass(frozen=True)
class TtLiftEarlyReturnsPass(ModulePass):
    """Make every kernel a single block by turning early-return branches into scf.if.

    Raises: PassFailedException for other unstructured control flow, naming the kernel line.
    Example: mtia-opt k.mlir -p tt-lift-early-returns
    """

    name = "tt-lift-early-returns"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from mtia_xdsl.transforms.canonicalization.tt import inline_calls

        lifted_helper = False
        for func in [f for f in op.ops if isinstance(f, tt.FuncOp)]:
            if len(func.body.blocks) > 1:
                lift_early_returns(func)
                lifted_helper |= bool(func.sym_visibility) and func.sym_visibility.data == "private"
        if lifted_helper:
            inline_calls(op)
