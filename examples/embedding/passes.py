"""`demo-lower-square`: the embedding compiler's pass, run between two of mtia_xdsl's.

It runs after `tt-rewrite-tensor-descriptor-to-pointer` and before `convert-tt-to-mtia` (see
`driver.pipeline`), so mtia_xdsl's lowering never sees a `demo` op.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from examples.embedding.dialect import SquareOp


@dataclass(frozen=True)
class LowerSquare(RewritePattern):
    """demo.square %x -> arith.mulf %x, %x (the op class comes from the caller's context: mtia_xdsl's arith)."""

    mulf: type[Operation]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SquareOp, rewriter: PatternRewriter) -> None:
        mul = self.mulf.create(operands=[op.input, op.input], result_types=[op.result.type])
        mul.location = op.location  # diagnostics keep pointing at the source line
        rewriter.replace(op, mul)


@dataclass(frozen=True)
class DemoLowerSquarePass(ModulePass):
    """Rewrite every `demo.square` into `arith.mulf`.

    Requires: a context with mtia_xdsl's dialects registered (`mtia_xdsl.dialects.register_dialects`).
    """

    name = "demo-lower-square"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerSquare(ctx.get_op("arith.mulf"))).rewrite_module(op)
