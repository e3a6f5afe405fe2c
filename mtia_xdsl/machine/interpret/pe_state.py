"""What the run of a batch of programs on a PE accumulates: its CBs and the engine commands it issued.

The commands are the trace `machine/timing.py` schedules; `ScalarCoreCounter` counts the scalar-core
instructions issued between them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.ir import Operation

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, ProgramTrace
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.cb import CbSpace, SimCB


@dataclass
class PeState:
    """What the run of a batch of programs accumulates: their CBs and the commands they issued."""

    program_ids: list[tuple[int, int, int]]
    """The programs of the batch, in batch order (one for a plain per-program run)."""
    config: MachineConfig
    """The chip the programs run on (for costs the functional run must record, e.g. DPE passes)."""
    cbs: list[SimCB] = field(default_factory=list)
    cb_space: CbSpace | None = None
    """The CB IDs and LS bytes the CBs use (made at the first cb_alloc)."""
    commands: list[Command | list[Command]] = field(default_factory=list)
    """Per command issued: one Command shared by every program, or one per program of the batch."""
    scalar_instrs: int = 0
    engine_depth: int = 0
    runs_cache: dict[tuple, tuple] = field(default_factory=dict)
    """Contiguous runs of the DMA blocks seen (in this batch, or launch when the runner shares it), by
    (strides, bounds, element bytes)."""

    @property
    def size(self) -> int:
        """Number of programs in the batch."""
        return len(self.program_ids)

    def issue(self, cmd: Command | list[Command]) -> None:
        """Record a command: the same for the whole batch, or a list with one per program."""
        for c in [cmd] if isinstance(cmd, Command) else cmd:
            c.scalar_instrs = self.scalar_instrs
        self.scalar_instrs = 0
        self.commands.append(cmd)

    def issue_each(self, make: Callable[[int], Command], uniform: bool) -> None:
        """Record one command per program (`make(b)` for batch entry b), or `make(0)` for all if uniform."""
        self.issue(make(0) if uniform else [make(b) for b in range(self.size)])

    def traces(self, end_op: Operation) -> list[ProgramTrace]:
        """Return every program's trace, in batch order.

        Raises: InterpretationError if a CB still holds tiles (unbalanced CB protocol).
        """
        for cb in self.cbs:
            if cb.visible or cb.reserved:
                raise cb._error(
                    f"the program ends with {len(cb.visible)} published and {len(cb.reserved)} reserved tile(s) "
                    "left in a CB (unbalanced CB protocol)",
                    end_op,
                )
        depth = {cb.cb_id: cb.depth for cb in self.cbs}
        tile_bytes = {cb.cb_id: mtia.tile_bytes(cb.tile) for cb in self.cbs}
        offsets = {cb.cb_id: cb.ls_offset for cb in self.cbs}
        hw_ids = {cb.cb_id: cb.hw_id for cb in self.cbs if cb.hw_id is not None}
        hw_id = hw_ids if len(hw_ids) == len(self.cbs) else None
        n = self.size
        columns = [itertools.repeat(c, n) if isinstance(c, Command) else c for c in self.commands]
        per_program = zip(*columns, strict=False) if columns else itertools.repeat((), n)
        structure = object()  # the batch ran one control flow with one CB protocol: one command structure
        return [
            ProgramTrace(
                program_id=pid,
                commands=list(commands),
                cb_depth=depth,
                cb_tile_bytes=tile_bytes,
                cb_ls_offset=offsets,
                cb_hw_id=hw_id,
                tail_scalar_instrs=self.scalar_instrs,
                structure=structure,
            )
            for pid, commands in zip(self.program_ids, per_program, strict=False)
        ]


class ScalarCoreCounter:
    """Counts the scalar-core instructions a program executes (ops outside engine bodies).

    The machine's interpreter (`reference.OpCounter`) increments `state.scalar_instrs` for every op it
    starts outside an engine body, except the engine commands themselves; the run loop points `state`
    at the current batch's PeState.
    """

    def __init__(self) -> None:
        self.state: PeState | None = None

    def counts(self, op: Operation) -> bool:
        """Return whether `op` is a scalar-core instruction when it runs outside an engine body."""
        return type(op) not in ENGINE_OP_TYPES


ENGINE_OP_TYPES = frozenset(mtia.ENGINE_OPS)
