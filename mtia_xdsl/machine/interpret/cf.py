"""Reference semantics of `cf` branches: xDSL's, with the batch check of the machine's runner.

A `cf.cond_br` condition must agree across a batch of programs (`values.uniform`); otherwise
`Divergence` is raised for the runner to split the batch.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import cf
from xdsl.interpreter import Interpreter, Successor, impl_terminator, register_impls
from xdsl.interpreters.cf import CfFunctions as XdslCfFunctions

from mtia_xdsl.machine.interpret.values import uniform


@register_impls
class CfFunctions(XdslCfFunctions):
    """cf.br and cf.cond_br (the condition must be the same for the whole batch)."""

    @impl_terminator(cf.ConditionalBranchOp)
    def run_cond_br(self, interpreter: Interpreter, op: cf.ConditionalBranchOp, args: tuple[Any, ...]):
        # The successor arguments come from `args` (operands: cond, then-args, else-args): the machine's
        # interpreter keeps values in slots, not in xDSL's environment, so `get_values` cannot see them.
        n_then = len(op.then_arguments)
        if bool(uniform(args[0], op)):
            return Successor(op.then_block, tuple(args[1 : 1 + n_then])), ()
        return Successor(op.else_block, tuple(args[1 + n_then :])), ()
