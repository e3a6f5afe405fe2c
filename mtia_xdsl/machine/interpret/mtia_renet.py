"""Functional semantics of `mtia.re_allreduce` (language extension re_reduce) and its RE network command.

Participants: a program's group is the programs running in the same round (the k-th program of each PE,
`Placement.rounds`) on the PEs of its PE row (`pe_axis` 0) or PE column (1) of the launch's sub-grid.
Every participant contributes its input and receives the reduction over the group, computed in the
input's type, in PE order. A group is complete only if every PE of the row (column) runs a program in
that round and all of them reach the op together: the machine's batch runner keeps groups in one batch,
and programs of a group that diverge before the op (a branch or loop bound that differs between them),
or a PE with no program in that round, make it an InterpretationError at the op's kernel line naming
the missing programs, never a hang.

Timing (machine model only): one RE command of kind "re_link" per participant, scalar-blocking (the
issuing core waits for the collective's result): its link carries the tile twice (reduce towards one end
of the row, broadcast back) over 2 x (participants - 1) hops, costed by `program_shape.re_link_cycles`.
The commands of a group (`re_group_size`, `re_axis`) start together at the last participant's arrival
(the timing model's barrier, machine/re_barrier.py).

Batches: programs run in batches (machine/run.py); a batch whose group is incomplete (its other
members were split off by a divergence) leaves its inputs in `LaunchState.collective_inputs` and raises
`CollectiveWait`; the runner undoes it, runs the other batches and retries it, and a rerun reuses the
results (`collective_results`). When no waiting batch can make progress, the wait is the error.

Registered by `machine.reference.make_tt_interpreter`, like the other PE-grid ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import RE_LINK_KIND, Command, Engine
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions
from mtia_xdsl.machine.interpret.mtia_pe import launch_placement
from mtia_xdsl.machine.interpret.tt import get_launch_state
from mtia_xdsl.machine.interpret.values import (
    as_value,
    element_format,
    element_type_of,
    location_str,
    logical_rank,
)
from mtia_xdsl.machine.placement import Placement
from mtia_xdsl.semantics.reduce import reduce


class CollectiveWait(InterpretationError):
    """A batch reached a cross-PE reduction before the rest of a group; its message is the error to report
    if the others never arrive."""


RE_LINK_PASSES = 2
"""Times the tile crosses each link of the row: once reducing towards its end, once broadcasting back."""


def groups(placement: Placement, linear: np.ndarray, pe_axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return per program of `linear` its group key, and per program of the launch its key and local PE.

    A key is round * (lines) + line, the line being the PE row (pe_axis 0) or column (1) of the sub-grid.
    """
    pe_all, rounds = placement.rounds()
    width, height = placement.subgrid.tile_width, placement.subgrid.tile_height
    row, col = np.divmod(pe_all, width)
    line, lines = (row, height) if pe_axis == 0 else (col, width)
    key_all = rounds * lines + line
    return key_all[linear], key_all, pe_all


def _describe(placement: Placement, linear: Any, pe_all: np.ndarray) -> str:
    gx, gy, _ = placement.grid
    parts = []
    for i in np.asarray(linear).reshape(-1)[:8]:
        y, x = divmod(int(i), gx)
        z, y = divmod(y, gy)
        row, col = divmod(int(pe_all[int(i)]), placement.subgrid.tile_width)
        parts.append(f"program ({x}, {y}, {z}) on PE (x={col}, y={row})")
    more = np.size(linear) - len(parts)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def check_group(
    axis: int, where: str, placement: Placement, key: int, members: np.ndarray, key_all: np.ndarray, pe_all: Any
) -> None:
    """Raise InterpretationError at kernel location `where` unless `members` (linear program ids) are the whole
    group `key` of a re_reduce over PE rows (`axis` 0) or columns (1) and the group fills its line.

    Raises: InterpretationError when a PE of the line runs no program in that round; CollectiveWait when some
    member has not arrived (the error to report if it never does).
    """
    size = placement.subgrid.tile_width if axis == 0 else placement.subgrid.tile_height
    expected = np.flatnonzero(key_all == key)
    where = f"{where}: error: re_reduce"
    line = "row" if axis == 0 else "column"
    if len(expected) < size:
        n_pes = placement.subgrid.n_pes
        raise InterpretationError(
            f"{where}: {_describe(placement, expected, pe_all)} waits for the other PEs of its PE {line}, which run "
            f"no program in that round ({len(key_all)} programs on {n_pes} PEs): launch a whole number of PE "
            f"{line}s of programs (e.g. grid = get_num_pes() programs, or choose pe_subgrid)"
        )
    missing = np.setdiff1d(expected, members)
    if len(missing):
        raise CollectiveWait(
            f"{where}: participant {_describe(placement, missing, pe_all)} never arrives: the programs of a PE "
            f"{line} must reach re_reduce together, the same number of times; make the branches and loop bounds "
            "before it the same for all of them (or they failed before reaching it)"
        )


@register_impls
class MtiaReNetFunctions(InterpreterFunctions):
    """mtia.re_allreduce."""

    @impl(mtia.ReAllreduceOp)
    def run_re_allreduce(self, interpreter: Interpreter, op: mtia.ReAllreduceOp, args: PythonValues) -> PythonValues:
        launch = get_launch_state(interpreter)
        placement = launch_placement(interpreter, op)
        linear = np.atleast_1d(placement.linear_ids(launch.program_id))
        call = launch.collective_calls
        launch.collective_calls += 1
        t = op.input.type
        shape = list(t.get_shape()) if hasattr(t, "get_shape") else []  # type: ignore[attr-defined]
        x = np.asarray(args[0])
        batched = x.ndim > logical_rank(t)
        memo = launch.collective_results if launch.collective_results is not None else {}
        known = [memo.get((int(i), call)) for i in linear]
        if not all(r is not None for r in known):
            inputs = launch.collective_inputs if launch.collective_inputs is not None else {}
            full = np.broadcast_to(x if batched else x[None], (len(linear), *shape))
            inputs.update(((int(i), call), full[b]) for b, i in enumerate(linear))
            _reduce_groups(op, placement, linear, call, inputs, memo)
            known = [memo[(int(i), call)] for i in linear]
        out = np.stack(known)  # type: ignore[arg-type]
        _record_link(interpreter, op, placement, int(np.prod(shape, dtype=np.int64)))
        value = out if batched or len(linear) > 1 else out[0]
        return (as_value(value, t),)


def _reduce_groups(
    op: mtia.ReAllreduceOp,
    placement: Placement,
    linear: np.ndarray,
    call: int,
    inputs: dict[tuple[int, int], Any],
    results: dict[tuple[int, int], Any],
) -> None:
    """Reduce the inputs of each group of `linear` at call `call` into `results` (every member's entry).

    Raises: InterpretationError for a group a PE has no program for; CollectiveWait for a group whose other
    members have not contributed yet.
    """
    keys, key_all, pe_all = groups(placement, linear, op.pe_axis.value.data)
    for key in np.unique(keys):
        expected = np.flatnonzero(key_all == key)
        expected = expected[np.argsort(pe_all[expected], kind="stable")]  # PE order
        arrived = np.asarray([i for i in expected if (int(i), call) in inputs], dtype=np.int64)
        check_group(op.pe_axis.value.data, location_str(op.location), placement, int(key), arrived, key_all, pe_all)
        total = reduce(op.kind.data, np.stack([inputs[(int(i), call)] for i in expected]), 0)
        results.update(((int(i), call), total) for i in expected)


def _record_link(interpreter: Interpreter, op: mtia.ReAllreduceOp, placement: Placement, elems: int) -> None:
    """Record the RE network command of every program of the batch (machine model runs only)."""
    state = interpreter.get_data(MtiaFunctions, "pe", lambda: None)
    if state is None:
        return
    axis = op.pe_axis.value.data
    size = placement.subgrid.tile_width if axis == 0 else placement.subgrid.tile_height
    dtype = element_format(element_type_of(op.input.type)).name
    command = re_link_command(location_str(op.location), elems, dtype, size, axis)
    state.issue_each(lambda b: command, True)


def re_link_command(where: str, elems: int, dtype: str, group_size: int, axis: int) -> Command:
    """The RE network command of one participant of an mtia.re_allreduce of `elems` elements of `dtype` over a
    group of `group_size` programs on a PE row (`axis` 0) or column (1); see the module docstring."""
    return Command(
        Engine.RE,
        RE_LINK_KIND,
        where,
        (),
        (),
        elems=RE_LINK_PASSES * elems,
        dtype=dtype,
        re_hops=RE_LINK_PASSES * (group_size - 1),
        scalar_blocking=True,
        re_group_size=group_size,
        re_axis=axis,
    )
