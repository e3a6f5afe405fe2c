"""What the run of a batch of programs on a PE accumulates: its CBs and the engine commands it issued.

The commands are the trace `machine/timing.py` schedules; `ScalarCoreCounter` counts the scalar-core
instructions issued between them.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.ir import Operation

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import Command, ProgramTrace, SlotRef
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.cb import CbSpace, SimCB

_command_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Command) if f.init))
"""The fields of a Command its constructor takes, in order (as `dataclasses.replace` copies them)."""


def _reissued(cmd: Command, scalar_instrs: int, waits: tuple[SlotRef, ...], fills: tuple[SlotRef, ...]) -> Command:
    """A copy of `cmd` with these scalar instructions and CB slots: `dataclasses.replace`, about 4x faster
    (it rereads the dataclass's fields on every call)."""
    new = Command(*_command_fields(cmd))
    new.scalar_instrs, new.waits, new.fills = scalar_instrs, waits, fills
    return new


@dataclass
class Partial:
    """Commands issued by only some programs of a batch (a compacted loop iteration, `compaction.py`)."""

    index: np.ndarray
    """The programs (positions in the batch, ascending) that issued them."""
    commands: list[Any]
    """As `PeState.commands`, for those programs in that order."""


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
    commands: list[Command | list[Command] | Partial] = field(default_factory=list)
    """Per command issued: one Command shared by every program, one per program of the batch, or the
    commands of some programs only (`Partial`)."""
    scalar_instrs: Any = 0
    """Scalar-core instructions since the last command: an int, or after a compacted loop an int64 array (B,)."""
    seq_shift: dict[int, np.ndarray] | None = None
    """After a compacted loop: per CB, how many tiles each program pushed (and popped) fewer than the CB's
    shared counters say (its commands' slots are moved back by that many); None: none."""
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
        if self.seq_shift is not None or type(self.scalar_instrs) is np.ndarray:
            cmd = self._moved(cmd) if isinstance(cmd, Command) and self._uniform() else self._per_program(cmd)
        else:
            for c in [cmd] if isinstance(cmd, Command) else cmd:
                c.scalar_instrs = self.scalar_instrs
        self.scalar_instrs = 0
        self.commands.append(cmd)

    def _uniform(self) -> bool:
        """Every program has the same scalar instructions pending and the same CB slot shifts."""
        instrs = self.scalar_instrs
        if type(instrs) is np.ndarray and not (instrs == instrs[0]).all():
            return False
        return all((s == s[0]).all() for s in (self.seq_shift or {}).values())

    def _moved(self, cmd: Command) -> Command:
        """`cmd` for every program of a `_uniform` batch: the pending scalar instructions, slots shifted."""
        instrs = self.scalar_instrs
        k = int(instrs[0]) if type(instrs) is np.ndarray else instrs
        shift = {cb: int(s[0]) for cb, s in (self.seq_shift or {}).items() if s[0]}

        def slots(refs: tuple[SlotRef, ...]) -> tuple[SlotRef, ...]:
            if not any(r.cb in shift for r in refs):
                return refs
            return tuple(SlotRef(r.cb, r.seq - shift.get(r.cb, 0)) for r in refs)

        return _reissued(cmd, k, slots(cmd.waits), slots(cmd.fills))

    def _per_program(self, cmd: Command | list[Command]) -> list[Command]:
        """`cmd` as each program issues it after a compacted loop: its own scalar instructions and CB slots."""
        n = self.size
        cmds = [cmd] * n if isinstance(cmd, Command) else cmd
        instrs = self.scalar_instrs
        shift = self.seq_shift or {}
        moved: dict[tuple[int, tuple[int, ...]], tuple[SlotRef, ...]] = {}

        def slots(refs: tuple[SlotRef, ...], b: int) -> tuple[SlotRef, ...]:
            by = tuple(int(shift[r.cb][b]) if r.cb in shift else 0 for r in refs)
            if not any(by):
                return refs
            key = (id(refs), by)
            out = moved.get(key)
            if out is None:
                out = moved[key] = tuple(SlotRef(r.cb, r.seq - k) for r, k in zip(refs, by, strict=True))
            return out

        out = []
        for b, c in enumerate(cmds):
            k = int(instrs[b]) if type(instrs) is np.ndarray else instrs
            out.append(_reissued(c, k, slots(c.waits, b), slots(c.fills, b)))
        return out

    def sub_batch(self, index: np.ndarray) -> PeState:
        """The state of programs `index` of this batch for one compacted loop iteration: the same CBs, fresh
        commands (`merge_sub_batch` records them here)."""
        sub = PeState(
            [self.program_ids[int(b)] for b in index],
            self.config,
            self.cbs,
            self.cb_space,
            scalar_instrs=self.scalar_instrs[index] if type(self.scalar_instrs) is np.ndarray else self.scalar_instrs,
            seq_shift=None if self.seq_shift is None else {cb: s[index] for cb, s in self.seq_shift.items()},
            runs_cache=self.runs_cache,
        )
        sub.settle()
        return sub

    def merge_sub_batch(self, index: np.ndarray, sub: PeState) -> None:
        """Take back the state of the programs `index` after a compacted iteration ran them in `sub`."""
        self.commands.append(Partial(index, sub.commands))  # even without commands: it marks the programs' structure
        if type(self.scalar_instrs) is not np.ndarray:
            self.scalar_instrs = np.full(self.size, self.scalar_instrs, dtype=np.int64)
        self.scalar_instrs[index] = sub.scalar_instrs
        for cb, s in (sub.seq_shift or {}).items():
            self._shift(cb)[index] = s

    def left_behind(self, cb: int, index: np.ndarray, pushed: int) -> None:
        """A compacted iteration of programs `index` pushed (and popped) `pushed` tiles of CB `cb`: the other
        programs are that many behind the CB's counters."""
        if pushed:
            shift = self._shift(cb)
            shift += pushed
            shift[index] -= pushed

    def _shift(self, cb: int) -> np.ndarray:
        if self.seq_shift is None:
            self.seq_shift = {}
        s = self.seq_shift.get(cb)
        if s is None:
            s = self.seq_shift[cb] = np.zeros(self.size, dtype=np.int64)
        return s

    def settle(self) -> None:
        """After a compacted loop: per-program counts that ended equal become one again."""
        instrs = self.scalar_instrs
        if type(instrs) is np.ndarray and (instrs == instrs[0]).all():
            self.scalar_instrs = int(instrs[0])
        if self.seq_shift is not None:
            self.seq_shift = {cb: s for cb, s in self.seq_shift.items() if s.any()} or None

    def issue_each(self, make: Callable[[int], Command], uniform: bool) -> None:
        """Record one command per program (`make(b)` for batch entry b), or `make(0)` for all if uniform."""
        self.issue(make(0) if uniform else [make(b) for b in range(self.size)])

    def release(self) -> None:
        """Break the references between the batch's CBs and their `CbSpace` (after `traces`, or after the batch
        failed), so that they are freed as soon as the batch is dropped, without a garbage collection."""
        if self.cb_space is not None:
            self.cb_space.release()

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
        if any(type(c) is Partial for c in self.commands) or type(self.scalar_instrs) is np.ndarray:
            return self._compacted_traces(depth, tile_bytes, offsets, hw_id)
        columns = [itertools.repeat(c, n) if isinstance(c, Command) else c for c in self.commands]
        per_program = zip(*columns, strict=False) if columns else itertools.repeat((), n)
        structure = object()  # the batch ran one control flow with one CB protocol: one command structure
        tail = self.scalar_instrs
        # positional (program_id, commands, cb_depth, cb_tile_bytes, tail_scalar_instrs, extra_ls_bytes,
        # cb_ls_offset, structure, cb_hw_id): one per program of the batch
        return [
            ProgramTrace(pid, list(commands), depth, tile_bytes, tail, 0, offsets, structure, hw_id)
            for pid, commands in zip(self.program_ids, per_program, strict=False)
        ]

    def _compacted_traces(
        self,
        depth: dict[int, int],
        tile_bytes: dict[int, int],
        offsets: dict[int, int],
        hw_id: dict[int, int] | None,
    ) -> list[ProgramTrace]:
        """`traces` of a batch that ran compacted loops: programs in the same compacted iterations share a
        structure."""
        n = self.size
        per: list[list[Command]] = [[] for _ in range(n)]
        member: list[list[int]] = [[] for _ in range(n)]
        _add_commands(self.commands, list(range(n)), per, member, itertools.count())
        structures: dict[tuple[int, ...], object] = {}
        instrs = self.scalar_instrs
        return [
            ProgramTrace(
                program_id=pid,
                commands=per[b],
                cb_depth=depth,
                cb_tile_bytes=tile_bytes,
                cb_ls_offset=offsets,
                cb_hw_id=hw_id,
                tail_scalar_instrs=int(instrs[b]) if type(instrs) is np.ndarray else instrs,
                structure=structures.setdefault(tuple(member[b]), object()),
            )
            for b, pid in enumerate(self.program_ids)
        ]


def _add_commands(
    entries: list[Any], programs: list[int], per: list[list[Command]], member: list[list[int]], tags: Any
) -> None:
    """Append `entries` (`PeState.commands`, issued by batch entries `programs`) to each program's commands in
    `per`; a `Partial`'s programs get the next tag of `tags` in `member` (a plain function: a nested one
    calling itself would be a cycle left for the garbage collector)."""
    for e in entries:
        if type(e) is Partial:
            some = [programs[int(k)] for k in e.index]
            tag = next(tags)
            for b in some:
                member[b].append(tag)
            _add_commands(e.commands, some, per, member, tags)
        elif isinstance(e, Command):
            for b in programs:
                per[b].append(e)
        else:
            for b, c in zip(programs, e, strict=True):
                per[b].append(c)


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
