"""Reference semantics of `scf` control flow: xDSL's own, with typed loop induction variables.

xDSL's `scf.for` passes a Python int as the induction variable; here it has the numpy type of the loop
bounds (`i32` loops stay `np.int32`), so arithmetic on it wraps like the IR says. `scf.yield` and
`scf.condition` are xDSL's. In a batch of programs, loop bounds and conditions must agree across the batch
(`values.uniform`); otherwise `Divergence` is raised for the runner to split the batch, except for an
`scf.for` whose upper bound alone differs, which runs compacted when it can (`compaction.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions as XdslScfFunctions
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.compaction import loop_facts, run_compacted
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import Divergence, as_value, location_str, uniform


def _same_values(a: PythonValues, b: PythonValues) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _cb_tiles(interpreter: Interpreter) -> list[tuple[np.ndarray, ...]]:
    """Copies of the published tiles of every CB of the running program (none at tt level).

    After bufferizing, a loop's tensor values live in CBs rather than in the loop's carried values
    (`while tl.max(v) > 0: v = v // 2` carries nothing), so progress shows there.
    """
    from mtia_xdsl.machine.interpret.mtia import MtiaFunctions

    state = interpreter.get_data(MtiaFunctions, "pe", lambda: None)
    if state is None:
        return []
    return [tuple(np.array(t, copy=True) for t in cb.visible) for cb in state.cbs]


def _same_tiles(a: list[tuple[np.ndarray, ...]], b: list[tuple[np.ndarray, ...]]) -> bool:
    return len(a) == len(b) and all(_same_values(x, y) for x, y in zip(a, b, strict=True))


@register_impls
class ScfFunctions(XdslScfFunctions):
    """scf.for/if/while/index_switch/yield/condition; the induction variable is typed."""

    def __init__(self) -> None:
        super().__init__()
        self._loop_facts: dict[Operation, Any] = {}
        """`compaction.loop_facts` of the divergent loops run so far."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lb, ub, step, *carried = args
        lb, step = uniform(lb, op), uniform(step, op)
        iv_type = op.body.block.args[0].type
        loop_args = tuple(carried)
        try:
            ub = uniform(ub, op)
        except Divergence as d:
            if int(step) <= 0:
                raise
            facts = self._loop_facts.get(op)
            if facts is None:
                facts = self._loop_facts[op] = loop_facts(op)
            return run_compacted(interpreter, op, facts, int(lb), d.values, int(step), loop_args, iv_type)
        if int(step) <= 0:
            where = location_str(op.location)
            raise InterpretationError(
                f"{where}: error: scf.for step is {step}; it must be positive at run time (as in upstream Triton): "
                "make the `range` step a tl.constexpr (a negative constexpr step runs the loop downwards) or "
                "loop with a positive step and compute the index from it (`for j in range(0, n): i = n - 1 - j`)"
            )
        for i in range(int(lb), int(ub), int(step)):
            iv = as_value(np.int64(i), iv_type)
            loop_args = interpreter.run_ssacfg_region(op.body, (iv, *loop_args), "for")
        return loop_args

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues) -> PythonValues:
        region = op.true_region if bool(uniform(args[0], op)) else op.false_region
        return interpreter.run_ssacfg_region(region, (), "if")

    @impl(scf.WhileOp)
    def run_while(self, interpreter: Interpreter, op: scf.WhileOp, args: PythonValues) -> PythonValues:
        """Raises: InterpretationError when an iteration changes neither the carried values, nor the tiles
        in the program's CBs, nor global memory: the program is deterministic, so it would loop forever
        (a spin-wait on another program)."""
        memory = get_launch_state(interpreter).memory
        loop_args = args
        memory.watchers += 1
        try:
            while True:
                version = memory.version
                before = loop_args
                tiles_before = _cb_tiles(interpreter)
                condition, *forwarded = interpreter.run_ssacfg_region(
                    op.before_region, loop_args, "while.before_region"
                )
                if not bool(uniform(condition, op)):
                    return tuple(forwarded)
                loop_args = interpreter.run_ssacfg_region(op.after_region, tuple(forwarded), "while.after_region")
                if (
                    memory.version == version
                    and _same_values(before, loop_args)
                    and _same_tiles(tiles_before, _cb_tiles(interpreter))
                ):
                    raise InterpretationError(
                        f"{location_str(op.location)}: error: this while loop never ends: an iteration changed "
                        "neither its loop-carried values nor global memory. Programs run one after another on "
                        "the machine model, so a program cannot wait for a value that another program writes "
                        "(spin-waits and semaphores between programs are not supported)"
                    )
        finally:
            memory.watchers -= 1

    @impl(scf.IndexSwitchOp)
    def run_index_switch(self, interpreter: Interpreter, op: scf.IndexSwitchOp, args: PythonValues) -> PythonValues:
        return super().run_index_switch(interpreter, op, (int(uniform(args[0], op)),))
