"""A circular buffer at run time, checked as the CP would (see `mtia.py` for the protocol it enforces).

Reserving a full CB, waiting on an empty one, reading without a wait, pushing an unwritten slot: each is an
error naming the kernel line. A batch of programs shares one `SimCB` (its control flow, and so its CB
protocol, is the same for every program of the batch).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import SlotRef
from mtia_xdsl.utils.locations import location_str


@dataclass
class SimCB:
    """A circular buffer at run time: published tiles (FIFO), reserved slots, sequence counters."""

    cb_id: int
    depth: int
    tile: Attribute
    where: str
    visible: deque[Any] = field(default_factory=deque)
    reserved: list[Any] = field(default_factory=list)
    pushed: int = 0
    popped: int = 0
    waited: int = 0

    def _error(self, msg: str, op: Operation) -> InterpretationError:
        return InterpretationError(
            f"{location_str(op.location)}: error: {msg} "
            f"(CB #{self.cb_id} {mtia.CircularBufferType(self.depth, self.tile)}"
            f", allocated at {self.where})"
        )

    def reserve(self, n: int, op: Operation) -> None:
        if len(self.visible) + len(self.reserved) + n > self.depth:
            raise self._error(
                f"cb_reserve of {n} slot(s) would wait forever: {len(self.visible)} published and "
                f"{len(self.reserved)} reserved of {self.depth}; pop tiles first or deepen the CB",
                op,
            )
        self.reserved.extend([None] * n)

    def write(self, tile: Any, op: Operation) -> SlotRef:
        for i, slot in enumerate(self.reserved):
            if slot is None:
                self.reserved[i] = tile
                return SlotRef(self.cb_id, self.pushed + i)
        raise self._error("a command writes a CB slot that was not reserved (missing cb_reserve)", op)

    def push(self, n: int, op: Operation) -> None:
        if n > len(self.reserved) or any(s is None for s in self.reserved[:n]):
            raise self._error(f"cb_push of {n} slot(s) that no command wrote", op)
        self.visible.extend(self.reserved[:n])
        del self.reserved[:n]
        self.pushed += n

    def wait(self, n: int, op: Operation) -> None:
        if len(self.visible) < n:
            raise self._error(f"cb_wait for {n} tile(s) would wait forever: {len(self.visible)} published", op)
        self.waited = max(self.waited, n)

    def front(self, op: Operation) -> tuple[Any, SlotRef]:
        if self.waited < 1 or not self.visible:
            raise self._error("a command reads a CB without a cb_wait for its tile", op)
        return self.visible[0], SlotRef(self.cb_id, self.popped)

    def update(self, tile: Any, op: Operation) -> SlotRef:
        """Overwrite the front tile (an `inplace` command's accumulator); return its slot."""
        if self.waited < 1 or not self.visible:
            raise self._error("an inplace command updates a CB tile without a cb_wait for it", op)
        self.visible[0] = tile
        return SlotRef(self.cb_id, self.popped)

    def pop(self, n: int, op: Operation) -> None:
        if self.waited < n or len(self.visible) < n:
            raise self._error(f"cb_pop of {n} tile(s) but only {self.waited} were waited for", op)
        for _ in range(n):
            self.visible.popleft()
        self.popped += n
        self.waited -= n
