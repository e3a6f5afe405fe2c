"""`typed_walker`: xDSL's PatternRewriteWalker with a worklist that holds only the ops its pattern can match.

xDSL's walker pushes every op of the region onto its worklist (and, after a rewrite, the users, operand
producers and new ops of the change), pops each, resets its rewriter and calls the pattern, which for most
ops returns at once. For a pattern that matches ops of given classes only (`op_type_rewrite_pattern`)
and does nothing else for the other ops (no dead-code or folding step, as GreedyRewritePatternApplier
adds), popping such an op has no effect: leaving it off the worklist keeps the order of the ops that are
visited, so the same rewrites happen in the same order, without the per-op cost of the others.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriteWalker, RewritePattern
from xdsl.utils.worklist import Worklist

from mtia_xdsl.utils.isa import is_subclass


class _TypedWorklist(Worklist[Operation]):
    """A Worklist that ignores pushes of ops outside `types`."""

    def __init__(self, types: type | tuple[type, ...]) -> None:
        super().__init__()
        self.types = types

    def push(self, item: Operation) -> None:
        if is_subclass(type(item), self.types):
            super().push(item)


def typed_walker(pattern: RewritePattern, types: type | tuple[type, ...], **options: Any) -> PatternRewriteWalker:
    """Return `PatternRewriteWalker(pattern, **options)` visiting only ops of `types` (see the module docstring).

    Requires: `pattern` changes nothing for an op outside `types` (e.g. an `op_type_rewrite_pattern` on one
    of them, not a GreedyRewritePatternApplier, whose dead-code step applies to every op).
    """
    walker = PatternRewriteWalker(pattern, **options)
    walker._worklist = _TypedWorklist(types)  # pyright: ignore[reportPrivateUsage]
    return walker


__all__ = ["typed_walker"]
