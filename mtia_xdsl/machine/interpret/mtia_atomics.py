"""Functional semantics of `mtia.atomic_rmw` and `mtia.atomic_cas` (batched convention), recorded for timing.

The scalar core performs an atomic element by element: each active lane reads, updates and writes its
element in global memory (the update happens at the memory, so lanes and programs that hit the same
address see each other's writes in program order, then lane order). The command is
`Engine.SCALAR` kind "atomic_rmw"/"atomic_cas": one read and one write per active lane, latency-bound
like a gather, with the byte extent it touches so the timing model keeps it ordered against DMA of the
same bytes.

Batched values: ptr, val, cmp and mask may carry leading batch dimensions (one per program of the
batch); programs are applied in batch order, which is one valid serialization of concurrent atomics.

Register next to MtiaFunctions: `interpreter.register_implementations(MtiaAtomicFunctions())`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, SlotRef, command_kind
from mtia_xdsl.machine.interpret.command_work import lanes_command
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, active_lanes, get_pe_state
from mtia_xdsl.machine.interpret.tt import atomic_update, get_launch_state, pointee_type
from mtia_xdsl.machine.interpret.values import (
    as_value,
    element_format,
    element_type_of,
    location_str,
    logical_rank,
)
from mtia_xdsl.semantics.atomic import cas_update, rmw_update


def _result_type(op: mtia.AtomicRmwOp | mtia.AtomicCasOp) -> Attribute:
    return op.out.type.tile if op.out is not None else op.result[0].type


def _finish(
    interpreter: Interpreter,
    op: mtia.AtomicRmwOp | mtia.AtomicCasOp,
    args: PythonValues,
    ptr: Any,
    mask: Any,
    old: np.ndarray,
    waits: list[SlotRef],
) -> PythonValues:
    """Return the old values (tensor level) or write them to the out CB and record the command."""
    t = _result_type(op)
    value = as_value(old, t)
    if op.out is None:
        return (value,)
    slot = args[-1].write(value, op)
    state = get_pe_state(interpreter)
    elem_bytes = element_format(element_type_of(t)).size_bytes
    lanes = active_lanes(ptr, mask, logical_rank(t), state.size, elem_bytes)
    dtype = element_format(element_type_of(t)).name

    kind, where, reads, ls_bytes = command_kind(op.name), location_str(op.location), tuple(waits), mtia.tile_bytes(t)

    def make(b: int) -> Command:
        active, extent = lanes.active[b], lanes.extent[b]
        return lanes_command(kind, where, reads, (slot,), active, extent, elem_bytes, True, True, ls_bytes, dtype)

    state.issue_each(make, lanes.uniform)
    return ()


def _per_program(interpreter: Interpreter, op: Operation, values: list[Any]) -> list[np.ndarray]:
    """Broadcast `values` to one common shape with a leading batch dimension per program when the batch
    has several programs: an atomic happens once per program even when its operands are uniform."""
    rank = logical_rank(_result_type(op))  # type: ignore[arg-type]
    arrays = [np.asarray(v) for v in values]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    size = get_pe_state(interpreter).size if op.out is not None else 1  # type: ignore[attr-defined]
    if size > 1 and len(shape) == rank:
        shape = (size, *shape)
    return [np.broadcast_to(a, shape) for a in arrays]


def _pointee(op: Operation) -> Attribute:
    """Element type the pointers (first operand, a value or a CB of them) point to."""
    return pointee_type(mtia.tile_type(op.operands[0].type))


@register_impls
class MtiaAtomicFunctions(InterpreterFunctions):
    """Semantics of mtia.atomic_rmw / mtia.atomic_cas; see the module docstring."""

    @impl(mtia.AtomicRmwOp)
    def run_atomic_rmw(self, interpreter: Interpreter, op: mtia.AtomicRmwOp, args: PythonValues) -> PythonValues:
        waits: list[SlotRef] = []
        ptr = MtiaFunctions._read(args[0], op, waits)
        val = MtiaFunctions._read(args[1], op, waits)
        mask = MtiaFunctions._read(args[2], op, waits) if op.mask is not None else None
        code = op.atomic_rmw_op.value.data
        fn = rmw_update(code)
        if fn is None:
            raise InterpretationError(f"{location_str(op.location)}: error: atomic_rmw kind {code} is not supported")
        ptr_b, val_b, mask_b = _per_program(interpreter, op, [ptr, val, True if mask is None else mask])
        mask = None if mask is None else mask_b
        flat_val = val_b.reshape(-1)

        def update(old: np.ndarray, lanes: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return fn(old, flat_val[lanes].astype(old.dtype)).astype(old.dtype)

        memory = get_launch_state(interpreter).memory
        old = atomic_update(memory, ptr_b, mask, _pointee(op), update, location_str(op.location))
        return _finish(interpreter, op, args, ptr_b, mask, old, waits)

    @impl(mtia.AtomicCasOp)
    def run_atomic_cas(self, interpreter: Interpreter, op: mtia.AtomicCasOp, args: PythonValues) -> PythonValues:
        waits: list[SlotRef] = []
        ptr, cmp, val = (MtiaFunctions._read(a, op, waits) for a in args[:3])
        ptr_b, cmp_b, val_b = _per_program(interpreter, op, [ptr, cmp, val])
        flat_cmp, flat_val = cmp_b.reshape(-1), val_b.reshape(-1)

        def update(old: np.ndarray, lanes: np.ndarray) -> np.ndarray:
            return cas_update(old, flat_cmp[lanes], flat_val[lanes])

        memory = get_launch_state(interpreter).memory
        old = atomic_update(memory, ptr_b, None, _pointee(op), update, location_str(op.location))
        return _finish(interpreter, op, args, ptr_b, None, old, waits)
