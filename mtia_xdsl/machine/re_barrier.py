"""The cross-PE barrier of `mtia.re_allreduce` (language extension re_reduce) in the timing model.

Every participant of a reduction records one RE `re_link` command whose `re_group_size` is the size of its
group (machine/interpret/mtia_renet.py). A participant *arrives* at the cycle its `re_link` could start:
issued (its scalar core has read the input tile), its dependencies ended and its RE free. The reduction
network cannot combine a tile before every participant has sent it, so every participant's transfer starts
at the group's last arrival: its RE link is busy for the command's occupancy (bytes over
`re_link_bytes_per_cycle`) and its result arrives the hop latency later (`re_hops` x `re_hop_cycles`, the
tile crossing the row's or column's 2 x (participants - 1) links), both `program_shape.re_link_cycles`.
So each participant's `re_link`, and the scalar core blocked on it, ends at
`last arrival + occupancy + hops x re_hop_cycles`; the RE of a waiting PE runs nothing else meanwhile.

A group is a round's programs (the k-th program of each PE) on one chip PE row (`re_axis` 0) or column (1),
at their n-th barrier command; the functional run has already checked that each group is complete. A group
still short of participants when nothing else can run is a TimingError naming the call's kernel line.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from mtia_xdsl.machine.program_shape import ProgramRun


def next_barrier(positions: list[int], head: int, end: int) -> int:
    """Return the first of `positions` (a program's barrier commands, as positions in its RE queue, in
    increasing order) at or after queue position `head`, else `end`."""
    k = bisect.bisect_left(positions, head)
    return positions[k] if k < len(positions) else end


class ReBarrier:
    """The groups of one simulation: who has arrived at which barrier, at what cycle.

    A member is `(pe, run, i, arrival)`: the timing model's PE object, the program run, the index of its
    `re_link` command and its arrival cycle.
    """

    def __init__(self, pe_cols: int, pe_of_program: list[int], pe_queues: Sequence[list[int]]) -> None:
        self.pe_cols = pe_cols
        self.pe_of_program = pe_of_program
        self.pe_queues = pe_queues
        self.round_of: dict[int, int] | None = None
        """Program index -> its rank among its PE's programs (computed at the first arrival)."""
        self.waiting: dict[tuple[int, int, int, int], list[tuple[Any, ProgramRun, int, float]]] = {}
        """Group key (round, axis, line, ordinal) -> members arrived so far."""
        self.arrived: set[tuple[int, int]] = set()
        """(program index, command index) of members arrived and not yet released."""

    def arrive(
        self, pe: Any, run: ProgramRun, position: int, i: int, arrival: float
    ) -> list[tuple[Any, ProgramRun, int, float]] | None:
        """Record that command i of `run` (an `re_link` with a group, at `position` in its RE queue) arrived at
        cycle `arrival`.

        Returns the whole group when this was its last member (each member then leaves the barrier), else
        None; a second arrival of the same command is ignored.
        """
        if (run.index, i) in self.arrived:
            return None
        self.arrived.add((run.index, i))
        c = run.cmds[i]
        ordinal = bisect.bisect_left(run.re_barriers, position)
        key = (self._round(run.index), c.re_axis, self._line(run.index, c.re_axis), ordinal)
        members = self.waiting.setdefault(key, [])
        members.append((pe, run, i, arrival))
        if len(members) < c.re_group_size:
            return None
        del self.waiting[key]
        self.arrived.difference_update((m[1].index, m[2]) for m in members)
        return members

    def incomplete_message(self) -> str | None:
        """Return the error for the first group still short of participants, or None if none is."""
        for members in self.waiting.values():
            pe, run, i, _ = members[0]
            c = run.cmds[i]
            missing = c.re_group_size - len(members)
            line = "row" if c.re_axis == 0 else "column"
            return (
                f"{c.loc}: re_reduce: program {run.prog.program_id} on PE {pe.pe} waits for {missing} other "
                f"participant{'s' if missing > 1 else ''} of its PE {line} that never arrive ({len(members)} of "
                f"{c.re_group_size} arrived): every PE of the {line} must run a program in that round and reach "
                "the call"
            )
        return None

    def _round(self, index: int) -> int:
        if self.round_of is None:
            self.round_of = {p: k for queue in self.pe_queues for k, p in enumerate(queue)}
        return self.round_of[index]

    def _line(self, index: int, axis: int) -> int:
        row, col = divmod(self.pe_of_program[index], self.pe_cols)
        return row if axis == 0 else col
