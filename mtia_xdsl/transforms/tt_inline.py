"""tt-inline: inline calls of non-noinline helper functions, then fold and clean as upstream's make_ttir does.

The patterns live in `transforms/canonicalization/tt.py`; the frontend runs them right after building a
kernel, and this pass makes the same cleanup a pipeline step for modules from elsewhere (upstream
`.ttir` files, hand-written tests).
Example: mtia-opt k.mlir -p tt-inline
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TtInlinePass(ModulePass):
    """Inline tt.call of helpers that are not noinline; fold constants; drop dead ops and helpers."""

    name = "tt-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from mtia_xdsl.transforms.canonicalization.tt import inline_and_clean

        inline_and_clean(op)
