"""Functional semantics of the PE-grid ops `mtia.pe_id` and `mtia.num_pes` (language extension get_pe_id).

A program's PE is the one the launch's placement (`machine/placement.py`: mapping strategy on the PE
sub-grid) puts it on, the same placement the timing model schedules it by. Coordinates are within the
sub-grid: x is the column (0 <= x < tile width), y the row (0 <= y < tile height). In a batch of programs
the result is an int32 array with one entry per program.

Registered by `machine.reference.make_tt_interpreter`, so the tt reference run and the machine model agree.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import location_str
from mtia_xdsl.machine.placement import Placement


def launch_placement(interpreter: Interpreter, op: Operation) -> Placement:
    """Return the launch's Placement, or raise InterpretationError at `op` when the run has none."""
    placement = get_launch_state(interpreter).placement
    if isinstance(placement, InterpretationError):
        raise InterpretationError(f"{location_str(op.location)}: error: {op.name}: {placement}")
    if not isinstance(placement, Placement):
        raise InterpretationError(
            f"{location_str(op.location)}: error: {op.name}: the launch has no PE placement; run the kernel "
            "through run_kernel or run_tt with options naming a machine"
        )
    return placement


@register_impls
class MtiaPeFunctions(InterpreterFunctions):
    """mtia.pe_id and mtia.num_pes."""

    @impl(mtia.PeIdOp)
    def run_pe_id(self, interpreter: Interpreter, op: mtia.PeIdOp, args: PythonValues) -> PythonValues:
        placement = launch_placement(interpreter, op)
        local = placement.local_pe(get_launch_state(interpreter).program_id)
        row, col = np.divmod(np.asarray(local, dtype=np.int32), np.int32(placement.subgrid.tile_width))
        value = col if op.axis.value.data == 0 else row
        return (value.astype(np.int32) if np.ndim(value) else np.int32(value),)

    @impl(mtia.NumPesOp)
    def run_num_pes(self, interpreter: Interpreter, op: mtia.NumPesOp, args: PythonValues) -> PythonValues:
        grid = launch_placement(interpreter, op).subgrid
        return (np.int32(grid.tile_width if op.axis.value.data == 0 else grid.tile_height),)
