"""Cross-PE reductions (`mtia.re_allreduce`, language extension re_reduce) for runs of emitted code.

The host runtime (runtime/host_runtime.cpp) runs one program at a time, so a program cannot wait inside a
reduction for the rest of its group. Instead a program stops at a reduction whose result it was not given
(`mtia_re_allreduce`, status 2 of `mtia_host_call`) and leaves its input; the runner (backend/host.py,
backend/riscv.py) undoes the program's memory writes, and reruns it from the start with the results known so
far once its group (the programs of its round on its PE row or column: `machine/interpret/mtia_renet.py`
`groups`) has all arrived. The reduction is `semantics.reduce.reduce` over the group's inputs in PE order,
as the machine model computes it, so results are the model's bit for bit; every program's final run
records its `re_link` commands, so cycles are the model's too.

A launch with R reductions per program runs each program up to R + 1 times. Groups that can never complete
(a PE with no program in the round, programs that diverge before the reduction) are the model's errors
(`mtia_renet.check_group`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.formats import element_format
from mtia_xdsl.machine.interpret.mtia_renet import CollectiveWait, check_group, groups
from mtia_xdsl.machine.placement import Placement
from mtia_xdsl.semantics.reduce import reduce


@dataclass(frozen=True)
class Waiting:
    """Where a program stopped: its `call`-th reduction (0-based) of `data` (stored bytes of `dtype`)."""

    call: int
    data: bytes
    kind: str
    dtype: str
    pe_axis: int
    where: str
    """The reduction's kernel location ("file:line:col")."""


class Collectives:
    """The reductions of one launch: inputs that arrived and the results of complete groups."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self.inputs: dict[tuple[int, int], bytes] = {}
        """(linear program id, call) -> input bytes."""
        self.results: dict[tuple[int, int], bytes] = {}
        """(linear program id, call) -> the group's result bytes."""
        self.waits: dict[tuple[int, int, int], Waiting] = {}
        """Program id -> the reduction it last stopped at."""

    def linear(self, pid: tuple[int, int, int]) -> int:
        return int(self.placement.linear_ids(pid))

    def known(self, pid: tuple[int, int, int]) -> tuple[int, bytes]:
        """The results program `pid` can be given: (number of calls, their bytes concatenated in call order)."""
        linear = self.linear(pid)
        parts: list[bytes] = []
        while (linear, len(parts)) in self.results:
            parts.append(self.results[(linear, len(parts))])
        return len(parts), b"".join(parts)

    def arrive(self, pid: tuple[int, int, int], w: Waiting) -> bool:
        """Record program `pid`'s input at `w`; return whether this completed its group (results now known).

        Raises: InterpretationError (the model's) if a PE of the group's line runs no program in that round.
        """
        linear = self.linear(pid)
        if (linear, w.call) in self.results:
            return True
        self.inputs[(linear, w.call)] = w.data
        self.waits[pid] = w
        try:
            expected = self._group(pid, w)
        except CollectiveWait:
            return False
        fmt = element_format(w.dtype)
        values = [fmt.from_storage(np.frombuffer(self.inputs[(int(i), w.call)], fmt.storage)) for i in expected]
        stack = np.stack(values)
        total = fmt.to_storage(reduce(w.kind, stack, 0)).tobytes()
        for i in expected:
            self.results[(int(i), w.call)] = total
        return True

    def _group(self, pid: tuple[int, int, int], w: Waiting) -> np.ndarray:
        """The linear ids of `pid`'s group at `w` in PE order, once all have arrived.

        Raises: CollectiveWait while some have not; InterpretationError if the group cannot fill its line.
        """
        keys, key_all, pe_all = groups(self.placement, np.asarray([self.linear(pid)], dtype=np.int64), w.pe_axis)
        expected = np.flatnonzero(key_all == keys[0])
        expected = expected[np.argsort(pe_all[expected], kind="stable")]  # PE order
        arrived = np.asarray([i for i in expected if (int(i), w.call) in self.inputs], dtype=np.int64)
        check_group(w.pe_axis, w.where, self.placement, int(keys[0]), arrived, key_all, pe_all)
        return expected

    def deadlock(self, waiting: list[tuple[int, int, int]]) -> InterpretationError:
        """The error when a whole pass over the `waiting` programs (in run order) completed no group: the
        model's, for the first of them."""
        for pid in waiting:
            try:
                self._group(pid, self.waits[pid])
            except CollectiveWait as e:
                return InterpretationError(f"{e} (program id {pid}); no tensor was written")
        return InterpretationError(f"re_reduce: programs {waiting[:4]} wait forever; no tensor was written")
