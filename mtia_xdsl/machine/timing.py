"""Discrete-event timing model: schedules recorded engine commands on the PEs and the shared memory.

Model (numbers from `MachineConfig`; see docs/machine.md):

- Placement: programs, ordered by linear program id (axis 0 fastest), are distributed over the PEs by a
  mapping strategy (MAPPINGS: contiguous chunks, round-robin or zigzag); a PE runs its programs in
  increasing program id, starting the next when the previous one has finished (`pe_programs_in_flight`
  1), or, with `pe_programs_in_flight` 2 (the default), as soon as the previous one's scalar core issued
  its last command if both programs' CBs fit LS and the CB IDs both use fit `cb_ids` (each program keeps
  its own CB state; engines still run commands in issue order and programs retire in order; global-memory
  order between the two is not checked). A program whose CBs (depth x tile bytes each, plus its other LS
  bytes) exceed `ls_bytes` is an error.
- Scalar core: issues the program's commands in order, spending `scalar_instrs` cycles plus
  `scalar_issue_cycles` per engine command; it stalls while the target engine already has
  `cp_queue_depth_commands` commands queued, and until the end of a `scalar_blocking` command or of a
  command it executes itself (`Engine.SCALAR`: gathers/scatters, latency bound).
- CP: a command is released `cp_check_cycles` per CB reference after issue, and not before its
  dependencies ended: the fillers of the slots it reads, and for each slot it fills, the filler and every
  reader of the slot's previous occupant (seq - depth).
- Engines run their commands one at a time in issue order. DPE: MACs x passes / MACs-per-cycle of the
  dtype, plus a pipeline fill when the DPE was idle before. SE (LUT functions at full rate with the LUT
  latency) / VEC (rate per dtype) / RE / MLU: elements / per-cycle width, results available a latency
  later. RE `re_link` commands (cross-PE reduction traffic): bytes / `re_link_bytes_per_cycle` on the
  link, then `re_hops` x `re_hop_cycles`; those of an `mtia.re_allreduce` group start together, at the
  last participant's arrival (a cross-PE barrier: machine/re_barrier.py). DMA: issue (+ per-descriptor)
  cycles on the engine, then the memory (+ NoC hop) latency, then the transfer on the PE's read or write
  port, in order per port; with `dma_queues` 2 (the default) stores start from a queue of their own
  (`program_shape.DMA_WRITE`), so a load need not wait behind an earlier store, and both queues share
  the engine's issue cycles and in-flight limit.
- Global memory (machine/memory.py): DRAM and SRAM bandwidth shared among all DMA transfers in flight
  on the chip, placement "dram", "sram" or "llc", 32-byte granules, program order through memory. Under
  "llc" a store ends in the SRAM LLC, which writes it on to DRAM with the bandwidth the reads leave
  (`llc_write_behind`); the kernel ends when the last such write reached DRAM.

Not modelled: LS bank conflicts and LS bandwidth, NoC contention, DRAM page/channel effects, kernel
launch (reported separately).

Implementation: compute engines (DPE, SE, VEC, RE, MLU) touch nothing outside their PE, so a command is
committed as soon as its start is known (issued, dependencies ended, engine free) and only its end is an
event; the scalar core runs ahead while its queue-depth stalls are decided. DMA and scalar-core memory
accesses start in events at their start cycle, since the LLC and the bandwidth pools are chip-wide and
must see them in time order. Ties are broken by event creation order, so a run is deterministic.
Programs of the same structure share their dependencies and compute costs (machine/program_shape.py);
command cycles live in per-program lists, spans are built only when asked for.
"""

from __future__ import annotations

import gc
import itertools
from array import array
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import numpy as np

from mtia_xdsl.machine import cost
from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace, TraceSource
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.memory import (
    BACKGROUND,
    WRITE_BEHIND,
    BandwidthPool,
    Flow,
    MemorySystem,
    MemoryTraffic,
    ls_overflow_message,
)
from mtia_xdsl.machine.memory import DRAM as DRAM_POOL
from mtia_xdsl.machine.placement import MAPPINGS, PeSubgrid, Placement
from mtia_xdsl.machine.program_shape import (
    DMA,
    DMA_WRITE,
    ENGINES,
    QUEUES,
    RE,
    SCALAR,
    FactsCache,
    ProgramRun,
    ProgramShape,
    TimingError,
    is_memory_queue,
    is_write,
    program_shape,
)
from mtia_xdsl.machine.re_barrier import ReBarrier, next_barrier
from mtia_xdsl.machine.timeline import (
    PACK_EVERY,
    BusyUnion,
    CommandCycles,
    CommandSpan,
    LineSums,
    Timeline,
    WorkTotals,
    lines_of,
    pack_into,
)

__all__ = [
    "MAPPINGS", "CommandSpan", "MemoryTraffic", "Timeline", "TimingError", "TraceSource", "WorkTotals", "simulate",
]  # fmt: skip

_QUEUE_ENGINES = (*ENGINES, Engine.DMA)
"""The engine of each queue index (queue DMA_WRITE is the DMA engine's)."""
_PROGRESS_EVERY: Final = 4096
"""Commands between two calls of the progress callback."""


def simulate(
    programs: Sequence[ProgramTrace],
    config: MachineConfig,
    mapping: str = "linear",
    grid: tuple[int, int, int] | None = None,
    progress: Callable[[int], None] | None = None,
    subgrid: PeSubgrid | None = None,
    keep_commands: bool = True,
) -> Timeline:
    """Schedule every program's commands on the chip and return when each ran.

    `progress`, if given, is called now and then with the number of commands finished since its last
    call (the calls add up to the number of commands). `subgrid` is the rectangle of PEs the launch runs
    on (machine/placement.py; default the whole chip). With `keep_commands` False the timeline keeps
    totals only (`Timeline.totals_only`: the same cycles, report figures and per-line costs, no command
    spans): each program's state is dropped when it is done, and with a `TraceSource` its trace too, so
    memory follows the programs in flight, not the commands of the launch.
    Units: cycles. Deterministic: the same inputs always give the same cycles.
    Requires: `programs` holds one trace per program id of the launch (a `TraceSource` may produce them
    when first asked for; `grid` is then required).
    Raises: TimingError naming the kernel loc for inconsistent CB references, a deadlock or a program
    whose LS footprint exceeds `ls_bytes`; ValueError for an unknown mapping.
    """
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown program mapping {mapping!r}; expected one of {', '.join(MAPPINGS)}")
    collecting = gc.isenabled()
    gc.disable()  # the run allocates many small objects and frees nothing cyclic: collections only cost time
    try:
        grid = grid or _infer_grid(programs)
        pe_of_program = place_programs(programs, config, mapping, grid, subgrid)
        source = programs if isinstance(programs, TraceSource) else TraceSource(list(programs))
        sim = _Simulator(source, config, pe_of_program, progress, keep_commands)
        sim.run()
        return sim.timeline(mapping, grid)
    finally:
        if collecting:
            gc.enable()


def place_programs(
    programs: Sequence[ProgramTrace],
    config: MachineConfig,
    mapping: str,
    grid: tuple[int, int, int],
    subgrid: PeSubgrid | None = None,
) -> list[int]:
    """Return the chip PE number of each program under `mapping` on `subgrid` (machine/placement.py).

    Raises: ValueError for an unknown mapping or a sub-grid off the chip.
    """
    area = subgrid or PeSubgrid.whole_chip(config)
    area.check(config)
    placement = Placement(mapping, area, grid)
    if not programs:
        return []
    pids = programs.program_ids if isinstance(programs, TraceSource) else [prog.program_id for prog in programs]
    ids = np.fromiter(itertools.chain.from_iterable(pids), dtype=np.int64, count=3 * len(pids)).reshape(-1, 3)
    local = np.atleast_1d(placement.local_pe((ids[:, 0], ids[:, 1], ids[:, 2])))
    rows, cols = np.divmod(local, area.tile_width)
    return (area.base_pe + rows * config.pe_cols + cols).tolist()


def _infer_grid(programs: Sequence[ProgramTrace]) -> tuple[int, int, int]:
    if not programs:
        return (1, 1, 1)
    ids = programs.program_ids if isinstance(programs, TraceSource) else [p.program_id for p in programs]
    return tuple(max(pid[a] for pid in ids) + 1 for a in range(3))  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------------
# Per-program and per-PE state
# ---------------------------------------------------------------------------------------------------


class _PE:
    """One PE: its program queue, engines and DMA ports."""

    __slots__ = (
        "block_index", "block_run", "dma_inflight", "dma_issue", "dma_slot_cycles", "dram_latency", "engine_free",
        "engine_used", "ls_high_water", "next_program", "older", "older_footprint", "pe", "ports", "queue", "run",
        "run_footprint", "scalar_busy", "sram_latency", "try_at", "wait_engine", "wait_index",
    )  # fmt: skip

    def __init__(
        self, pe: int, program_indices: list[int], memory: MemorySystem, port_rate: tuple[float, float]
    ) -> None:
        self.pe = pe
        self.dram_latency = memory.access_latency_cycles("dram", pe)
        self.sram_latency = memory.access_latency_cycles("sram", pe)
        """Cycles from a DMA request to its first byte from DRAM / SRAM (level latency plus NoC hops)."""
        self.queue = program_indices
        self.next_program = 0
        self.run: ProgramRun | None = None
        """The program whose scalar core issues (or last issued) commands."""
        self.older: ProgramRun | None = None
        """The previous program, still draining while `run` issues (programs in flight: see `_maybe_overlap`)."""
        self.run_footprint = 0
        self.older_footprint = 0
        """LS bytes of `run` and `older`."""
        self.engine_free = [0.0] * QUEUES
        """Per queue: when its engine is free (DMA_WRITE's entry is unused: both DMA queues share
        the engine's issue, `engine_free[DMA]`)."""
        self.engine_used = [False] * QUEUES
        self.try_at = [-1.0] * QUEUES
        self.scalar_busy = 0.0
        self.wait_engine = -1
        """Engine whose queue is full while the scalar core waits to issue `wait_index` (-1: none)."""
        self.wait_index = -1
        self.block_index = -1
        """Command whose end the scalar core waits for (-1: none), of program run `block_run`."""
        self.block_run: ProgramRun | None = None
        self.dma_inflight = 0
        self.ports = [_Port(port_rate[0]), _Port(port_rate[1])]
        """The read and the write port of its DMA."""
        self.dma_issue = 0.0
        """Cycles the DMA engine spent issuing commands (issue plus per-descriptor cycles)."""
        self.dma_slot_cycles = 0.0
        """Sum over DMA commands of the least time each holds an in-flight slot: issue, memory latency and
        its transfer at the port rate."""
        self.ls_high_water = 0


class _Port:
    """A PE's DMA read or write port: moves one transfer at a time at most at `rate` (bytes per cycle), in
    order; the transfers waiting for it form a FIFO linked through `_Xfer.behind`, from `first` to `last`."""

    __slots__ = ("busy", "bytes", "first", "last", "rate")

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.busy = False
        self.bytes = 0.0
        """Granule-rounded bytes moved through the port."""
        self.first: _Xfer | None = None
        self.last: _Xfer | None = None


class _Xfer(Flow):
    """A DMA command's transfer: waits in its PE port's FIFO from `ready`, then moves its memory-level parts
    one after another (`memory.MemorySystem.dma_parts`), each a flow of a memory pool (this object)."""

    __slots__ = ("behind", "direction", "i", "next", "parts", "pe", "ready", "run")

    def __init__(
        self, pe: _PE, run: ProgramRun, i: int, ready: float, parts: list[tuple[int, float, float]], direction: int
    ) -> None:
        self.end = 0.0
        self.seq = 0
        self.pe = pe
        self.run = run
        self.i = i
        self.ready = ready
        self.parts = parts
        self.next = 0
        """Index in `parts` of the next part to move."""
        self.direction = direction
        """0 read port, 1 write port."""
        self.behind: _Xfer | None = None
        """The transfer after it in its port's FIFO."""


class _Event:
    """A pending event: at cycle `t` run `kind` on `pe` with `i` (an engine, command or port) and `run`; events
    run in (t, seq) order (`seq`: creation order), so a run is deterministic."""

    __slots__ = ("group", "i", "kind", "pe", "run", "seq", "t")

    def __init__(
        self, t: float, seq: int, kind: int, pe: _PE | None, i: int, run: ProgramRun | None, group: object
    ) -> None:
        self.t = t
        self.seq = seq
        self.kind = kind
        self.pe = pe
        self.i = i
        self.run = run
        self.group = group
        """The participants of an `_E_BARRIER` event (else None)."""


class _EndLog:
    """`_Simulator.end_order`: the commands in the order they ended, each as its index in the concatenation of
    all programs' commands, packed (`packed`, after `close`); in a totals-only run only their number."""

    __slots__ = ("keep", "n", "packed", "pending")

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.n = 0
        self.packed: array[int] = array("q")
        self.pending: list[int] = []
        """Commands logged since the last packing (one call packs many)."""

    def append(self, g: int) -> None:
        self.n += 1
        if self.keep:
            self.pending.append(g)
            if len(self.pending) >= PACK_EVERY:
                self.close()

    def close(self) -> None:
        """Pack the commands logged since the last call."""
        pack_into(self.packed, self.pending, "q")
        self.pending.clear()

    def __len__(self) -> int:
        return self.n


def _queued(r: ProgramRun, e: int, t: float) -> tuple[int, float]:
    """(commands of `r` issued to engine e that have not started by cycle t, the start of the first of them:
    -1 if it is not committed, -2 if there is none); advances `r.started[e]`."""
    queue, start_t, head = r.queues[e], r.start_t, r.head[e]
    k = r.started[e]
    while k < head and start_t[queue[k]] <= t:
        k += 1
    r.started[e] = k
    pending = r.issued[e] - k
    if not pending:
        return 0, -2.0
    return pending, start_t[queue[k]] if k < head else -1.0


# Event kinds
_E_END: Final = 0
_E_TRY: Final = 1
_E_XFER: Final = 2
_ESCALAR: Final = 3
_E_ADVANCE: Final = 4
_E_BARRIER: Final = 5
_E_DONE: Final = 6
_NEVER: Final = float("inf")
"""A pool timer that is not set."""


class _Simulator:
    """The event loop; one instance per `simulate` call."""

    def __init__(
        self,
        programs: TraceSource,
        config: MachineConfig,
        pe_of_program: list[int],
        progress: Callable[[int], None] | None,
        keep_commands: bool = True,
    ) -> None:
        self.programs = programs
        self.keep_commands = keep_commands
        self.config = config
        self.pe_of_program = pe_of_program
        self.progress = progress
        per_pe: dict[int, list[int]] = {}
        for i, pe in enumerate(pe_of_program):
            per_pe.setdefault(pe, []).append(i)
        self.memory = MemorySystem(config)
        self.port_rate = (cost.dma_port_bytes_per_cycle(False, config), cost.dma_port_bytes_per_cycle(True, config))
        self.pes = [_PE(pe, idxs, self.memory, self.port_rate) for pe, idxs in sorted(per_pe.items())]
        self.re_barrier = ReBarrier(config.pe_cols, pe_of_program, [pe.queue for pe in self.pes])
        self.events: list[_Event] = []
        """Binary min-heap of the pending events by (cycle, sequence number), kept by hand: typed, the compiled
        model sifts it comparing native floats and ints."""
        self.seq = 0
        self.pool_due = [_NEVER] * len(self.memory.pools)
        """Per memory pool (`memory.DRAM`, `memory.SRAM`): when its next flow ends (`_pool_timer`)."""
        self.pool_seq = [0] * len(self.memory.pools)
        """Per memory pool: the event sequence number of its timer (ties with heap events go by it)."""
        self.work = WorkTotals()
        self.end_order = _EndLog(keep_commands)
        """Commands in the order they ended (index in the concatenation of all programs' commands), packed;
        only their number when the timeline keeps totals only."""
        self.cycles = CommandCycles(len(programs), _QUEUE_ENGINES)
        """Cycles of the commands of finished programs (timelines that keep every command)."""
        self.first_command = (
            list(itertools.accumulate((len(p.commands) for p in programs), initial=0))
            if keep_commands
            else [0] * len(programs)
        )
        self.line_sums = LineSums()
        """Per kernel loc, the costs of the commands of finished programs (totals-only timelines)."""
        self.busy = BusyUnion(_QUEUE_ENGINES)
        """Engine busy cycles of finished programs (totals-only timelines)."""
        self.reported = 0
        self.program_cycles = [(0.0, 0.0)] * len(programs)
        self.now = 0.0
        self.write_behind_end = 0.0
        """When the last write-behind of the LLC reached DRAM: the kernel ends no earlier."""
        self.queue_depth = config.cp_queue_depth_commands
        self.dma_outstanding = config.dma_outstanding_commands
        self.in_flight = config.pe_programs_in_flight
        self.split_dma = config.dma_queues == 2
        self.shapes: dict[tuple, ProgramShape] = {}
        self.command_facts = FactsCache(config)
        """What the program shapes read of each command, once per command object."""
        self.issue_cycles: dict[int, float] = {}
        """Descriptors of a DMA command -> its issue cycles on the DMA engine (`cost.dma_issue_cycles`)."""
        self.tail_cycles = config.scalar_cycles_per_instr
        """Cycles of a scalar instruction after a program's last command."""
        self.footprints: dict[tuple[int, int, int, int], tuple[int, tuple[object, ...]]] = {}
        """(id of cb_depth, id of cb_tile_bytes, id of cb_ls_offset, extra LS bytes) -> (LS footprint of a
        program, the keyed dicts: kept so no new dict takes their ids once a totals-only run released them)."""
        self.cb_id_counts: dict[tuple[int, int], tuple[int, tuple[object, ...]]] = {}
        """(id of cb_depth, id of cb_hw_id) -> (CB IDs a program takes on the CP, the keyed dicts, kept)."""
        self.last_footprint: tuple[object, object, object, int, int] = (None, None, None, 0, 0)
        """The last `_footprint` looked up: (cb_depth, cb_tile_bytes, cb_ls_offset, extra LS bytes, footprint)."""
        self.last_cb_ids: tuple[object, object, int] = (None, None, 0)
        """The last `_cb_ids_in_use` looked up: (cb_depth, cb_hw_id, CB IDs)."""

    # ---- event plumbing ----

    def push(
        self, t: float, kind: int, pe: _PE | None, i: int = 0, run: ProgramRun | None = None, group: object = None
    ) -> None:
        """Queue event `kind` at cycle t (see `_Event`)."""
        self.seq += 1
        event = _Event(t, self.seq, kind, pe, i, run, group)
        heap = self.events
        heap.append(event)
        k = len(heap) - 1
        while k > 0:
            parent = (k - 1) >> 1
            above = heap[parent]
            if above.t < t or (above.t == t and above.seq < event.seq):
                break
            heap[k] = above
            k = parent
        heap[k] = event

    def _pop_event(self) -> _Event:
        """Remove and return the first pending event (the heap is not empty)."""
        heap = self.events
        first = heap[0]
        last = heap.pop()
        n = len(heap)
        if n:
            k = 0
            t, seq = last.t, last.seq
            while True:
                child = 2 * k + 1
                if child >= n:
                    break
                below = heap[child]
                if child + 1 < n:
                    right = heap[child + 1]
                    if right.t < below.t or (right.t == below.t and right.seq < below.seq):
                        child += 1
                        below = right
                if t < below.t or (t == below.t and seq < below.seq):
                    break
                heap[k] = below
                k = child
            heap[k] = last
        return first

    def _pool_timer(self, pool: BandwidthPool) -> None:
        """Recompute `pool`'s rates and set its timer to when its next flow ends (none if no flow can end).

        A pool's flows end at one event, its timer, kept out of the heap: a reschedule replaces it, where
        a heap would keep every superseded event until its time. The timer takes the event sequence
        number a heap event would, so events run in the same order."""
        t = pool.reschedule()
        if t is None:
            self.pool_due[pool.index] = _NEVER
        else:
            self.seq += 1
            self.pool_due[pool.index] = t
            self.pool_seq[pool.index] = self.seq

    def run(self) -> None:
        for first in self.pes:
            self._start_next_program(first, 0.0)
        events = self.events
        pools, due, due_seq = self.memory.pools, self.pool_due, self.pool_seq
        while True:
            # the pool whose flows end first (ties: the earlier timer), against the first pending event
            k = 0 if due[0] < due[1] or (due[0] == due[1] and due_seq[0] < due_seq[1]) else 1  # DRAM, SRAM
            t = due[k]
            if t != _NEVER and (not events or t < events[0].t or (t == events[0].t and due_seq[k] < events[0].seq)):
                self.now = t
                due[k] = _NEVER
                self._on_pool(pools[k])
                continue
            if not events:
                break
            event = self._pop_event()
            self.now = t = event.t
            kind = event.kind
            if kind == _E_BARRIER:
                self._on_barrier(cast("list[tuple[_PE, ProgramRun, int, float]]", event.group))
                continue
            pe = event.pe
            assert pe is not None
            if kind == _E_TRY:
                if pe.run is not None:
                    self._try_start_now(pe, event.i)
            elif kind == _E_XFER:
                self._on_xfer(pe, event.i)
            elif kind == _ESCALAR:
                self._resume_scalar(pe, event.i)
            elif kind == _E_END:
                run = event.run
                assert run is not None
                self._finish(pe, run, event.i)
            elif kind == _E_ADVANCE:
                run = pe.run
                assert run is not None
                self._advance_scalar(pe, run, event.i, t)
            else:
                run = event.run
                assert run is not None
                self._on_done(pe, run)
        if self.progress is not None and len(self.end_order) > self.reported:
            self.progress(len(self.end_order) - self.reported)
        incomplete = self.re_barrier.incomplete_message()
        if incomplete is not None:
            raise TimingError(incomplete)
        for pe in self.pes:
            if pe.run is not None or pe.older is not None or pe.next_program < len(pe.queue):
                self._raise_deadlock(pe)

    # ---- programs ----

    def _start_next_program(self, pe: _PE, t: float) -> None:
        if pe.next_program >= len(pe.queue):
            pe.run = None
            return
        index = pe.queue[pe.next_program]
        pe.next_program += 1
        prog = self.programs[index]
        footprint = self._footprint(prog)
        if footprint > self.config.ls_bytes:
            raise TimingError(ls_overflow_message(prog, self.config, pe.pe))
        shape = program_shape(prog, self.config, self.shapes, self.command_facts)
        run = ProgramRun(index, self.first_command[index], prog, shape)
        run.start_cycle = t
        self.memory.traffic.ls_bytes += shape.ls_bytes
        self.work.add(shape.work)
        pe.run = run
        pe.run_footprint = footprint
        in_flight = footprint + (pe.older_footprint if pe.older is not None else 0)
        pe.ls_high_water = max(pe.ls_high_water, in_flight)
        self._advance_scalar(pe, run, 0, t)

    def _footprint(self, prog: ProgramTrace) -> int:
        """LS bytes a program holds (`ProgramTrace.ls_footprint_bytes`), remembered per batch."""
        depth, tile_bytes, offsets = prog.cb_depth, prog.cb_tile_bytes, prog.cb_ls_offset  # shared by a batch
        last = self.last_footprint  # the programs of a batch come one after another
        if last[0] is depth and last[1] is tile_bytes and last[2] is offsets and last[3] == prog.extra_ls_bytes:
            return last[4]
        key = (id(depth), id(tile_bytes), id(offsets), prog.extra_ls_bytes)
        known = self.footprints.get(key)
        if known is None:
            known = self.footprints[key] = (prog.ls_footprint_bytes(), (depth, tile_bytes, offsets))
        self.last_footprint = (depth, tile_bytes, offsets, prog.extra_ls_bytes, known[0])
        return known[0]

    def _cb_ids_in_use(self, prog: ProgramTrace) -> int:
        """CB IDs a program takes on the CP (`ProgramTrace.cb_ids_in_use`), remembered per batch."""
        depth, hw_id = prog.cb_depth, prog.cb_hw_id  # dicts shared by a batch
        last = self.last_cb_ids
        if last[0] is depth and last[1] is hw_id:
            return last[2]
        key = (id(depth), id(hw_id))
        known = self.cb_id_counts.get(key)
        if known is None:
            known = self.cb_id_counts[key] = (prog.cb_ids_in_use(), (depth, hw_id))
        self.last_cb_ids = (depth, hw_id, known[0])
        return known[0]

    def _maybe_overlap(self, pe: _PE, run: ProgramRun) -> None:
        """`run` (the issuing program) has issued its last command: start the PE's next program now if the
        CP can hold both programs' CB state (`pe_programs_in_flight` 2, both LS footprints fit `ls_bytes`,
        the CB IDs both use fit `cb_ids`) and `run` has not ended; else the next program starts when `run` is done.

        The next program's scalar core then issues while `run` drains; each engine still runs its
        commands in issue order (a program's commands after the previous program's), and programs retire
        in order (a program is done no earlier than the one before it).
        """
        if (
            self.in_flight < 2
            or pe.older is not None
            or run is not pe.run
            or run.done_queued
            or pe.next_program >= len(pe.queue)
        ):
            return
        nxt = self.programs[pe.queue[pe.next_program]]
        if pe.run_footprint + self._footprint(nxt) > self.config.ls_bytes:
            return
        if self._cb_ids_in_use(run.prog) + self._cb_ids_in_use(nxt) > self.config.cb_ids:
            return
        pe.older, pe.older_footprint = run, pe.run_footprint
        assert run.scalar_end is not None
        self._start_next_program(pe, run.scalar_end)

    def _advance_scalar(self, pe: _PE, run: ProgramRun, i: int, t: float) -> None:
        """The scalar core starts on command i at cycle t; issue ahead until it must wait (as `_issue`)."""
        costs, blocking, n, engine, issued = run.scalar_cost, run.blocking, run.n, run.engine, run.issued
        started, depth, issue_t, deps_left, queues, heads = (
            run.started,
            self.queue_depth,
            run.issue_t,
            run.deps_left,
            run.queues,
            run.head,
        )
        older = pe.older  # a draining program: its queued commands count too
        while i < n:
            cost = costs[i]
            pe.scalar_busy += cost
            t += cost
            e = engine[i]
            if e != SCALAR:
                # issued - started bounds the commands queued from above (`started` lags): below the depth, no check
                queued = issued[e] - started[e]
                if older is not None:
                    queued += older.issued[e] - older.started[e]
                if queued >= depth and self._queue_full(pe, run, e, i, t):
                    return
            issue_t[i] = t
            issued[e] += 1
            if blocking[i]:
                pe.block_index, pe.block_run = i, run
            if is_memory_queue(e):
                self._try_start_now(pe, e)
            elif deps_left[i] == 0 and queues[e][heads[e]] == i:  # else a dependency's end commits it
                self._drain(pe, run, [e])
            if blocking[i]:
                return
            i += 1
        tail = run.prog.tail_scalar_instrs * self.tail_cycles
        pe.scalar_busy += tail
        run.scalar_end = t + tail
        self._check_program_done(pe, run)
        self._maybe_overlap(pe, run)

    def _queue_full(self, pe: _PE, run: ProgramRun, e: int, i: int, t: float) -> bool:
        """Whether engine e's queue is full at cycle t >= now, when command i is to be issued; if so arrange
        a retry.

        The queue holds issued commands that have not started by t. Committed commands have known start
        cycles; uncommitted ones cannot start before the current cycle, so a full queue at t is known
        only once t is reached (an event at t), unless a committed start frees a place first.
        """
        queued = 0
        next_start = -2.0  # none yet
        older = pe.older
        if older is not None:  # the older program's commands start first
            queued, next_start = _queued(older, e, t)
        pending, first_start = _queued(run, e, t)
        if queued == 0:
            next_start = first_start
        queued += pending
        if queued < self.queue_depth:
            return False
        if next_start >= 0:
            self.push(next_start, _ESCALAR, pe, i)
        elif t > self.now:
            self.push(t, _ESCALAR, pe, i)
        else:
            pe.wait_engine, pe.wait_index = e, i
        return True

    def _issue(self, pe: _PE, run: ProgramRun, e: int, i: int, t: float) -> None:
        """Issue command i to engine e (whose queue has room) at cycle t; start it if it can start."""
        run.issue_t[i] = t
        run.issued[e] += 1
        if run.blocking[i]:
            pe.block_index, pe.block_run = i, run
        if is_memory_queue(e):
            self._try_start_now(pe, e)
        elif run.deps_left[i] == 0 and run.queues[e][run.head[e]] == i:  # else a dependency's end commits it
            self._drain(pe, run, [e])

    def _resume_scalar(self, pe: _PE, i: int) -> None:
        """Retry issuing command i (its scalar cycles are already spent) at the current cycle."""
        run = pe.run
        assert run is not None
        e = run.engine[i]
        if e != SCALAR and self._queue_full(pe, run, e, i, self.now):
            return
        self._issue(pe, run, e, i, self.now)
        if not run.blocking[i]:
            self._advance_scalar(pe, run, i + 1, self.now)

    def _wake_scalar(self, pe: _PE, e: int, start: float) -> None:
        """A command of engine e starts at `start`: a scalar core waiting on e's full queue retries then."""
        if pe.wait_engine == e:
            pe.wait_engine = -1
            self.push(start, _ESCALAR, pe, pe.wait_index)

    def _check_program_done(self, pe: _PE, run: ProgramRun) -> None:
        if run.ended < run.n or run.scalar_end is None or run.done_queued:
            return
        if run is not pe.older and pe.older is not None:
            return  # programs retire in order: checked again when the older one is done
        run.done_queued = True
        self.push(max(self.now, run.scalar_end, run.end_max), _E_DONE, pe, 0, run)

    def _on_done(self, pe: _PE, run: ProgramRun) -> None:
        self.program_cycles[run.index] = (run.start_cycle, self.now)
        if self.keep_commands:
            self.cycles.add(run.index, run.engine, run.issue_t, run.start_t, run.end_t)
        else:  # fold its commands into the totals and forget them
            self.line_sums.add(run.prog.structure, run.cmds, run.start_t, run.end_t)
            self.busy.add(pe.pe, run.index, run.engine, run.start_t, run.end_t)
            # Later commands on this PE start no earlier than the running program (or the next one, now).
            self.busy.flush(pe.pe, pe.run.start_cycle if run is pe.older and pe.run is not None else self.now)
            self.programs.release(run.index)
        if self.progress is not None and len(self.end_order) - self.reported >= _PROGRESS_EVERY:
            self.progress(len(self.end_order) - self.reported)
            self.reported = len(self.end_order)
        if run is pe.older:  # the issuing program may now be done, or let its successor start
            pe.older = None
            current = pe.run
            assert current is not None
            self._check_program_done(pe, current)
            if current.scalar_end is not None:
                self._maybe_overlap(pe, current)
            return
        self._start_next_program(pe, self.now)

    # ---- engines ----

    def _drain(self, pe: _PE, run: ProgramRun, work: list[int]) -> None:
        """Start what the engines in `work` can start: compute engines commit every head command whose
        start is known (its end too: they touch nothing outside the PE), DMA and the scalar core get a
        start attempt. Commits resolve dependents at once (as `_finish`), which may add engines to `work`."""
        (
            issue_t, deps_left, dep_ready, extra, occupancy, latency, dpe_fill, heads, queues, start_t, end_t,
            _dependents, _engine, first,
        ) = run.commit_state  # fmt: skip
        engine_free, engine_used, log = pe.engine_free, pe.engine_used, self.end_order
        ended, end_max = 0, run.end_max
        older = pe.older
        blocked_by = older if older is not None and older is not run else None
        handoff: list[int] | None = None  # made when needed: most calls hand nothing over
        while work:
            e = work.pop()
            if is_memory_queue(e):
                self._try_start_now(pe, e)
                continue
            queue, head = queues[e], heads[e]
            if blocked_by is not None and blocked_by.head[e] < len(blocked_by.queues[e]):
                continue  # the older program's commands on e go first; its last commit hands e over
            stop = len(queue)
            if e == RE and run.re_barriers:  # commit up to the next re_reduce barrier, which waits for its group
                stop = next_barrier(run.re_barriers, head, stop)
            while head < stop:
                i = queue[head]
                issued = issue_t[i]
                if issued < 0 or deps_left[i] > 0:
                    break
                release = issued + extra[i]
                if dep_ready[i] > release:
                    release = dep_ready[i]
                free = engine_free[e]
                start = release if release > free else free
                head += 1
                heads[e] = head
                start_t[i] = start
                occ = occupancy[i]
                fill = dpe_fill[i]
                if fill:  # only the DPE reads engine_used
                    if not (engine_used[e] and release <= free):
                        occ += fill
                    engine_used[e] = True
                engine_free[e] = start + occ
                if pe.wait_engine == e:
                    self._wake_scalar(pe, e, start)
                end = end_t[i] = start + occ + latency[i]
                ended += 1
                if end > end_max:
                    end_max = end
                log.append(first + i)
                self._release(pe, run, i, end, work)
            if head == stop < len(queue):
                self._re_arrive(pe, run, head, queue[head])
            if run is older and head == len(queue):
                if handoff is None:
                    handoff = [e]
                elif e not in handoff:
                    handoff.append(e)
        run.ended += ended
        run.end_max = end_max
        self._check_program_done(pe, run)
        if handoff is not None and pe.run is not None and pe.run is not run:
            self._drain(pe, pe.run, handoff)

    # ---- re_reduce barrier (machine/re_barrier.py) ----

    def _re_arrive(self, pe: _PE, run: ProgramRun, position: int, i: int) -> None:
        """RE command i of `run`, a re_reduce participant at `position` of its RE queue, is at the queue's head:
        if it could start (issued, dependencies ended), it arrives at its group's barrier at that cycle."""
        if run.issue_t[i] < 0 or run.deps_left[i] > 0:
            return
        arrival = max(run.issue_t[i] + run.release_extra[i], run.dep_ready[i], pe.engine_free[RE])
        group = self.re_barrier.arrive(pe, run, position, i, arrival)
        if group is not None:
            self.push(self.now, _E_BARRIER, None, 0, None, group)

    def _on_barrier(self, group: list[tuple[_PE, ProgramRun, int, float]]) -> None:
        """The last participant of `group` arrived: every member's transfer starts at the last arrival."""
        start = max(arrival for _, _, _, arrival in group)
        for pe, run, i, _ in group:
            run.head[RE] += 1
            run.start_t[i] = start
            free = pe.engine_free[RE] = start + run.occupancy[i]
            if pe.wait_engine == RE:
                self._wake_scalar(pe, RE, start)
            end = run.end_t[i] = free + run.latency[i]
            run.ended += 1
            run.end_max = max(run.end_max, end)
            self.end_order.append(run.first + i)
            work = [RE]
            self._release(pe, run, i, end, work)
            self._drain(pe, run, work)

    def _try_start_now(self, pe: _PE, e: int) -> None:
        """Start head commands of engine e (DMA or scalar core) now while they can; else retry when they can.

        These starts stay in time order because they touch the chip-wide LLC and bandwidth pools.
        """
        run = pe.older
        if run is None or run.head[e] == len(run.queues[e]):  # the older program's commands go first
            run = pe.run
            assert run is not None
        queue, heads, issue_t, deps_left = run.queues[e], run.head, run.issue_t, run.deps_left
        h = heads[e]
        while h < len(queue):
            i = queue[h]
            issued = issue_t[i]
            if issued < 0 or deps_left[i] > 0:
                return  # retried at issue / at the last dependency's end
            if e != SCALAR and pe.dma_inflight >= self.dma_outstanding:
                return  # retried when a DMA command ends
            release = issued + run.release_extra[i]
            if run.dep_ready[i] > release:
                release = run.dep_ready[i]
            start = pe.engine_free[DMA if e == DMA_WRITE else e]  # one issue pipeline for both DMA queues
            if release > start:
                start = release
            now = self.now
            if start > now:
                if pe.try_at[e] != start:
                    pe.try_at[e] = start
                    self.push(start, _E_TRY, pe, e)
                return
            h += 1
            heads[e] = h
            run.start_t[i] = now
            if pe.wait_engine == e:
                self._wake_scalar(pe, e, now)
            c = run.cmds[i]
            memory = self.memory
            memory.traffic.ls_bytes += c.ls_bytes
            if e != SCALAR:
                self._start_dma(pe, run, i, c, e, now)
            else:
                occupancy = memory.scalar_access_cycles(c, pe.pe)
                pe.engine_free[e] = now + occupancy
                self.push(now + occupancy, _E_END, pe, i, run)
        if run is pe.older and pe.run is not run:  # all of the older program's commands on e started
            self._try_start_now(pe, e)

    def _start_dma(self, pe: _PE, run: ProgramRun, i: int, c: Command, e: int, now: float) -> None:
        """DMA command i (of queue e) starts now: issue cycles on the engine, then the memory latency, then its
        transfer."""
        descriptors: int = c.descriptors
        issue = self.issue_cycles.get(descriptors)
        if issue is None:
            issue = self.issue_cycles[descriptors] = cost.dma_issue_cycles(descriptors, self.config)
        free = pe.engine_free[DMA] = now + issue
        pe.dma_issue += issue
        pe.dma_inflight += 1
        write = e == DMA_WRITE if self.split_dma else is_write(c)  # with two queues, a store's is DMA_WRITE
        parts, level = self.memory.dma_parts(c, write)
        latency = pe.dram_latency if level == "dram" else pe.sram_latency
        ready = free + latency
        direction = 1 if write else 0
        nbytes: float
        if len(parts) == 1:
            nbytes = parts[0][1]
        else:
            nbytes = 0.0
            for part in parts:
                nbytes += part[1]
        port = pe.ports[direction]
        port.bytes += nbytes
        pe.dma_slot_cycles += issue + latency + nbytes / port.rate
        xfer = _Xfer(pe, run, i, ready, parts, direction)
        last = port.last
        if last is None:
            port.first = xfer
        else:
            last.behind = xfer
        port.last = xfer
        self.push(ready, _E_XFER, pe, direction)

    # ---- DMA ----

    def _on_xfer(self, pe: _PE, direction: int) -> None:
        port = pe.ports[direction]
        if port.busy:
            return
        xfer = port.first
        if xfer is None or xfer.ready > self.now:
            return
        port.first = xfer.behind
        if port.first is None:
            port.last = None
        xfer.behind = None
        port.busy = True
        self._next_part(xfer)

    def _next_part(self, xfer: _Xfer) -> None:
        """Start the next memory-level part of a transfer, or finish the DMA command."""
        pe, direction = xfer.pe, xfer.direction
        parts = xfer.parts
        if xfer.next == len(parts):
            run, i = xfer.run, xfer.i
            pe.ports[direction].busy = False
            pe.dma_inflight -= 1
            self._finish(pe, run, i)
            # The head DMA changes only if it waited for this in-flight slot, or if its start attempt is due
            # now (it then starts here, before that event, as it always has); any other retry is queued.
            slot_freed = pe.dma_inflight == self.dma_outstanding - 1
            if slot_freed or pe.try_at[DMA] == self.now:
                self._try_start_now(pe, DMA)
            if self.split_dma and (slot_freed or pe.try_at[DMA_WRITE] == self.now) and pe.run is not None:
                self._try_start_now(pe, DMA_WRITE)
            self._on_xfer(pe, direction)
            return
        pool_index, nbytes, useful = parts[xfer.next]
        xfer.next += 1
        memory = self.memory
        memory.count_transfer(pool_index, nbytes, useful)
        if pool_index == WRITE_BEHIND:  # the LLC writes the bytes on to DRAM; the PE's command ends
            self._write_behind(nbytes)
            self._next_part(xfer)
            return
        pool = memory.pools[pool_index]
        pool.advance(self.now)
        self.seq += 1
        pool.add_flow(direction, nbytes, self.seq, xfer)
        self._pool_timer(pool)

    def _write_behind(self, nbytes: float) -> None:
        """The LLC starts writing `nbytes` of a store on to DRAM now, a background flow of the DRAM pool."""
        pool = self.memory.pools[DRAM_POOL]
        pool.advance(self.now)
        self.seq += 1
        pool.add_flow(BACKGROUND, nbytes, self.seq)
        self._pool_timer(pool)

    def _on_pool(self, pool: BandwidthPool) -> None:
        """Flows of `pool` end now (the event is current: its version is the pool's)."""
        pool.advance(self.now)
        done = pool.pop_finished()
        self._pool_timer(pool)
        for flow in done:
            if isinstance(flow, _Xfer):
                self._next_part(flow)
            else:  # an LLC write-behind reached DRAM
                self.write_behind_end = self.now

    # ---- command end ----

    def _release(self, pe: _PE, run: ProgramRun, i: int, end: float, work: list[int]) -> None:
        """Command i of `run` ends at `end`: its dependents may be ready from then (the engines of those with
        no dependency left go onto `work`), and a scalar core blocked on it resumes."""
        deps_left, dep_ready, engine = run.deps_left, run.dep_ready, run.engine
        for d in run.dependents[i]:
            deps_left[d] -= 1
            if end > dep_ready[d]:
                dep_ready[d] = end
            if deps_left[d] == 0:
                work.append(engine[d])
        if pe.block_index == i and pe.block_run is run:
            pe.block_index = -1
            self.push(end, _E_ADVANCE, pe, i + 1)

    def _finish(self, pe: _PE, run: ProgramRun, i: int) -> None:
        """A DMA or scalar-core command i of `run` ended now: record it and release its dependents."""
        end = self.now
        run.ended += 1
        if end > run.end_max:
            run.end_max = end
        run.end_t[i] = end
        self.end_order.append(run.first + i)
        work: list[int] = []
        self._release(pe, run, i, end, work)
        if work:
            self._drain(pe, run, work)
        else:
            self._check_program_done(pe, run)

    # ---- results ----

    def _raise_deadlock(self, pe: _PE) -> None:
        run = pe.older or pe.run
        if run is None:
            raise TimingError(f"PE {pe.pe} did not start all its programs")
        for e, engine in enumerate(_QUEUE_ENGINES):
            h = run.head[e]
            if h < len(run.queues[e]):
                c = run.cmds[run.queues[e][h]]
                raise TimingError(
                    f"{c.loc}: deadlock: {c.kind} on {engine.value} never started "
                    f"(program {run.prog.program_id}, PE {pe.pe}); a slot it reads or fills is never "
                    "released: check cb depths and pop order"
                )
        raise TimingError(f"deadlock in program {run.prog.program_id} on PE {pe.pe}")

    def _dma_bound(self, pe: _PE) -> float:
        """Cycles PE `pe`'s DMA needs at least: its engine issues commands one at a time; each port moves
        one transfer at a time at most at its per-PE rate (`dma_read/write_bytes_per_cycle`); and at most
        `dma_outstanding_commands` commands are in flight, each for at least its issue, memory latency and
        transfer at the port rate (Little's law)."""
        return max(
            pe.dma_issue,
            pe.ports[0].bytes / self.port_rate[0],
            pe.ports[1].bytes / self.port_rate[1],
            pe.dma_slot_cycles / self.dma_outstanding,
        )

    def timeline(self, mapping: str, grid: tuple[int, int, int]) -> Timeline:
        self.end_order.close()
        self.cycles.close()
        total = max(max((end for _, end in self.program_cycles), default=0.0), self.write_behind_end)
        shared: dict[str, Any] = dict(
            config=self.config,
            mapping=mapping,
            grid=grid,
            total_cycles=total,
            end_order=self.end_order.packed if self.keep_commands else self.end_order,  # type: ignore[arg-type]
            pe_of_program=self.pe_of_program,
            program_cycles=self.program_cycles,
            traffic=self.memory.traffic,
            work=self.work,
            ls_high_water_bytes={pe.pe: pe.ls_high_water for pe in self.pes},
            scalar_issue_cycles={pe.pe: pe.scalar_busy for pe in self.pes},
            dma_bound_cycles={pe.pe: self._dma_bound(pe) for pe in self.pes},
            llc_resident_bytes=self.memory.coverage.total,
            llc_overflowed=self.memory.llc_overflowed,
            write_behind_end_cycle=self.write_behind_end,
        )
        if not self.keep_commands:
            return Timeline(
                **shared,
                busy_totals=self.busy.result(),
                line_totals=lines_of(self.line_sums.acc),
            )
        return Timeline(
            **shared,
            cycles=self.cycles,
            programs=self.programs.traces,  # type: ignore[arg-type]  # all there: nothing was released
        )
