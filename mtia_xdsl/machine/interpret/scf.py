"""Reference semantics of `scf` control flow: xDSL's own, with typed loop induction variables.

xDSL's `scf.for` passes a Python int as the induction variable; here it has the numpy type of the loop
bounds (`i32` loops stay `np.int32`), so arithmetic on it wraps like the IR says. `scf.if`, `scf.while`,
`scf.yield` and `scf.condition` are xDSL's.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions as XdslScfFunctions
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.values import as_value, location_str


@register_impls
class ScfFunctions(XdslScfFunctions):
    """scf.for/if/while/yield/condition; the induction variable is typed."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lb, ub, step, *carried = args
        iv_type = op.body.block.args[0].type
        loop_args = tuple(carried)
        if int(step) <= 0:
            where = location_str(op.location)
            raise InterpretationError(f"{where}: error: scf.for step is {step}; it must be positive")
        for i in range(int(lb), int(ub), int(step)):
            iv = as_value(np.int64(i), iv_type)
            loop_args = interpreter.run_ssacfg_region(op.body, (iv, *loop_args), "for")
        return loop_args

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues) -> PythonValues:
        region = op.true_region if bool(args[0]) else op.false_region
        return interpreter.run_ssacfg_region(region, (), "if")
