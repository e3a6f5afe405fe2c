"""A circular buffer at run time, checked as the CP would (see `mtia.py` for the protocol it enforces).

Reserving a full CB, waiting on an empty one, reading without a wait, pushing an unwritten slot: each is an
error naming the kernel line. A batch of programs shares one `SimCB` (its control flow, and so its CB
protocol, is the same for every program of the batch).

CB IDs and LS bytes (`CbSpace`, one per PE): each CB's slots sit at the LS bytes mtia-cb-allocate gave it
(`ls_offset` on its cb_alloc; slot k at ls_offset + k x tile bytes) and it holds the CB ID it was given. A
command reading a tile whose bytes another CB has written since the tile was written is an error naming
both kernel lines, so a wrong allocation cannot read another value silently. A CB starting to hold tiles
while another CB with the same CB ID still holds some, or while `MachineConfig.cb_ids` CBs already hold
tiles, is an error too. A program without an allocation (cb_alloc without `cb_id`, e.g. an older .mlir)
runs with every CB its own CB ID and its own LS bytes, above those of the CBs allocated before it: the
layout every CB had before mtia-cb-allocate, checked against the CB ID limit at run time.
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
    """A circular buffer at run time: published tiles (FIFO), reserved slots, sequence counters, and where
    its slots are in LS (`ls_offset`, `slot_bytes`) under which CB ID (`hw_id`)."""

    cb_id: int
    """Position of its cb_alloc among the program's CBs (the machine model's CB number)."""
    depth: int
    tile: Attribute
    where: str
    hw_id: int | None = None
    """CB ID from mtia-cb-allocate; None: the CB has an ID of its own."""
    ls_offset: int = 0
    slot_bytes: int = 0
    space: CbSpace | None = None
    visible: deque[Any] = field(default_factory=deque)
    reserved: list[Any] = field(default_factory=list)
    pushed: int = 0
    popped: int = 0
    waited: int = 0
    overlaps: list[list[tuple[SimCB, int]]] = field(default_factory=list)
    """Per slot: the (CB, slot) pairs of other CBs whose bytes overlap it."""
    clobbered: list[tuple[SimCB, Operation] | None] = field(default_factory=list)
    """Per slot: the (CB, op) that wrote its bytes after this CB last wrote the slot (None: nobody); the
    error text is built only when a read finds one."""

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
        if self.space is not None and not self.visible and not self.reserved:
            self.space.start_holding(self, op)
        self.reserved.extend([None] * n)

    def _wrote(self, seq: int, op: Operation) -> None:
        """Slot of tile `seq` was written by `op`: mark the other CBs' slots sharing its bytes as clobbered."""
        if not self.overlaps:
            return
        slot = seq % self.depth
        self.clobbered[slot] = None
        for other, k in self.overlaps[slot]:
            other.clobbered[k] = (self, op)

    def _check_read(self, seq: int, op: Operation) -> None:
        if not self.clobbered:
            return
        clobber = self.clobbered[seq % self.depth]
        if clobber is not None:
            writer, write_op = clobber
            by = f"{writer.describe()}, written at {location_str(write_op.location)}"
            raise self._error(
                f"a command reads a tile whose LS bytes another CB has written since: {by} (the CB allocation "
                "gives CBs alive at the same time overlapping bytes)",
                op,
            )

    def describe(self) -> str:
        """`CB #i <type> (CB ID k, LS bytes [a, b)), allocated at LOC`."""
        where = f"LS bytes [{self.ls_offset}, {self.ls_offset + self.depth * self.slot_bytes})"
        hw = f"CB ID {self.hw_id}, " if self.hw_id is not None else ""
        cb_type = mtia.CircularBufferType(self.depth, self.tile)
        return f"CB #{self.cb_id} {cb_type} ({hw}{where}), allocated at {self.where}"

    def write(self, tile: Any, op: Operation) -> SlotRef:
        for i, slot in enumerate(self.reserved):
            if slot is None:
                self.reserved[i] = tile
                self._wrote(self.pushed + i, op)
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
        self._check_read(self.popped, op)
        return self.visible[0], SlotRef(self.cb_id, self.popped)

    def update(self, tile: Any, op: Operation) -> SlotRef:
        """Overwrite the front tile (an `inplace` command's accumulator); return its slot."""
        if self.waited < 1 or not self.visible:
            raise self._error("an inplace command updates a CB tile without a cb_wait for it", op)
        self._check_read(self.popped, op)
        self.visible[0] = tile
        self._wrote(self.popped, op)
        return SlotRef(self.cb_id, self.popped)

    def pop(self, n: int, op: Operation) -> None:
        if self.waited < n or len(self.visible) < n:
            raise self._error(f"cb_pop of {n} tile(s) but only {self.waited} were waited for", op)
        for _ in range(n):
            self.visible.popleft()
        self.popped += n
        self.waited -= n
        if self.space is not None and not self.visible and not self.reserved:
            self.space.stop_holding(self)


@dataclass
class CbSpace:
    """The CB IDs and LS bytes of one PE as the running program's CBs use them (see module docstring).

    `cb_ids` is MachineConfig.cb_ids (S9).
    """

    cb_ids: int
    cbs: list[SimCB] = field(default_factory=list)
    holding: dict[object, SimCB] = field(default_factory=dict)
    """CB ID (or, for a CB without one, the CB itself) -> the CB holding tiles under it."""
    top_bytes: int = 0
    """End of the highest CB placed so far."""

    def add(self, cb: SimCB, op: Operation, cb_id: int | None, ls_offset: int | None) -> None:
        """Place `cb` (from cb_alloc `op`) at its allocated CB ID and LS offset, or on its own above the others.

        Raises: InterpretationError if its CB ID is not below `cb_ids`.
        """
        cb.slot_bytes = mtia.tile_bytes(cb.tile)
        cb.hw_id = cb_id
        cb.ls_offset = ls_offset if ls_offset is not None else self.top_bytes
        cb.space = self
        if cb_id is not None and cb_id >= self.cb_ids:
            raise cb._error(
                f"CB ID {cb_id} is not below the {self.cb_ids} CB IDs of a PE's CP (MachineConfig.cb_ids)", op
            )
        size = cb.slot_bytes
        cb.overlaps = [[] for _ in range(cb.depth)]
        cb.clobbered = [None] * cb.depth
        for other in self.cbs:
            other_end = other.ls_offset + other.depth * other.slot_bytes
            if other.ls_offset >= cb.ls_offset + cb.depth * size or cb.ls_offset >= other_end:
                continue
            for k in range(cb.depth):
                lo = cb.ls_offset + k * size
                for j in range(other.depth):
                    olo = other.ls_offset + j * other.slot_bytes
                    if lo < olo + other.slot_bytes and olo < lo + size:
                        cb.overlaps[k].append((other, j))
                        other.overlaps[j].append((cb, k))
        self.cbs.append(cb)
        self.top_bytes = max(self.top_bytes, cb.ls_offset + cb.depth * size)

    def release(self) -> None:
        """Drop the references between its CBs and itself (a batch that ended): they are freed without a
        garbage collection. The CBs are unusable afterwards."""
        for cb in self.cbs:
            cb.space = None
            cb.overlaps = []
            cb.clobbered = []
        self.cbs = []
        self.holding = {}

    def start_holding(self, cb: SimCB, op: Operation) -> None:
        """`cb` (empty) is about to hold a tile. Raises: InterpretationError if its CB ID is held by another
        CB, or if `cb_ids` CBs already hold tiles."""
        key: object = cb.hw_id if cb.hw_id is not None else ("own", cb.cb_id)
        other = self.holding.get(key)
        if other is not None and other is not cb:
            raise cb._error(f"CB ID {cb.hw_id} is still in use by {other.describe()}, which holds tiles", op)
        if len(self.holding) >= self.cb_ids:
            alive = "; ".join(c.describe() for c in self.holding.values())
            raise cb._error(
                f"more than the {self.cb_ids} CB IDs of a PE's CP (MachineConfig.cb_ids) would be in use: "
                f"CBs holding tiles: {alive}",
                op,
            )
        self.holding[key] = cb

    def stop_holding(self, cb: SimCB) -> None:
        """`cb` holds no tile any more: its CB ID is free."""
        key: object = cb.hw_id if cb.hw_id is not None else ("own", cb.cb_id)
        if self.holding.get(key) is cb:
            del self.holding[key]
