"""tt-lift-early-returns: turn early `return` branches of kernels and helpers into structured scf.if.

Triton lowers `if cond: return` to `cf.cond_br` between blocks. The mtia passes and the machine's
command recording work on structured control flow, so this pass rewrites each function, until it is one
block:
- a block no branch reaches is erased;
- a block ending in `cf.br` to a block with no other predecessor absorbs that block (its arguments
  replaced by the branch's operands);
- a block ending in `cf.cond_br %c, ^t, ^f` where ^t and ^f are argument-free blocks that end in a
  `tt.return` (of the same types) and have no other predecessor becomes
  `%r = scf.if %c { ^t's ops; yield } else { ^f's ops; yield }` followed by `tt.return %r`;
- otherwise a block reached by `cf.br` from several blocks is copied into one of them (tail
  duplication), so that an if/else with a `return` in one branch ends each branch in its own return
  (upstream's nested if/else with returns; at most `_MAX_DUPLICATED_OPS` ops are copied).
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
        if isinstance(term, cf.BranchOp):
            succ = term.successor
            if succ is not block and _single_predecessor(succ):
                args = list(term.operands)
                Rewriter.erase_op(term)
                Rewriter.inline_block(succ, InsertPoint.at_end(block), args)
                return True
    return False


def _drop_unreachable(region: Region) -> bool:
    """Erase a block no branch reaches (Triton leaves one after an `if` whose branches both return)."""
    entry = region.blocks[0]
    for block in list(region.blocks)[1:]:
        if block is not entry and not any(True for _ in block.uses):
            for op in reversed(list(block.ops)):
                for result in op.results:
                    for use in list(result.uses):
                        if use.operation.parent_block() is not block:
                            return False
            region.detach_block(block)
            block.erase(safe_erase=False)
            return True
    return False


_MAX_DUPLICATED_OPS = 2000
"""Tail duplication stops (and the pass refuses the kernel) past this many copied ops."""


def _duplicate_join(region: Region, budget: list[int]) -> bool:
    """Copy a block reached by several `cf.br` into one of those predecessors (tail duplication).

    After an if/else whose one branch returns, both branches jump to the code after it; copying that
    code into each branch leaves every branch ending in its own `tt.return`, which `_lift_diamond` lifts.
    """
    for block in region.blocks:
        preds = [use.operation for use in block.uses]
        if len(set(preds)) < 2 or not all(isinstance(p, cf.BranchOp) for p in preds):
            continue
        size = sum(1 for _ in block.walk())
        if size > budget[0]:
            return False
        budget[0] -= size
        branch = preds[0]
        assert isinstance(branch, cf.BranchOp)
        mapping = dict(zip(block.args, branch.operands, strict=True))
        pred_block = branch.parent_block()
        assert pred_block is not None
        Rewriter.erase_op(branch)
        for op in block.ops:
            pred_block.add_op(op.clone(value_mapper=mapping))  # type: ignore[arg-type]
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
    budget = [_MAX_DUPLICATED_OPS]
    while len(region.blocks) > 1 and (
        _drop_unreachable(region)
        or _merge_straight_line(region)
        or _lift_diamond(region)
        or _duplicate_join(region, budget)
    ):
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
