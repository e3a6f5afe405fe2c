"""Reference semantics of `cf` branches: xDSL's, with the batch check of the machine's runner.

A `cf.cond_br` condition must agree across a batch of programs (`values.uniform`); otherwise
`Divergence` is raised for the runner to split the batch.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import cf
from xdsl.interpreter import Interpreter, impl_terminator, register_impls
from xdsl.interpreters.cf import CfFunctions as XdslCfFunctions

from mtia_xdsl.machine.interpret.values import uniform


@register_impls
class CfFunctions(XdslCfFunctions):
    """cf.br and cf.cond_br (the condition must be the same for the whole batch)."""

    @impl_terminator(cf.ConditionalBranchOp)
    def run_cond_br(self, interpreter: Interpreter, op: cf.ConditionalBranchOp, args: tuple[Any, ...]):
        return super().run_cond_br(interpreter, op, (bool(uniform(args[0], op)), *args[1:]))
