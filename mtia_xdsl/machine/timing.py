"""Discrete-event timing model: schedules recorded engine commands on the PEs and the shared memory.

Model (numbers from `MachineConfig`; see MACHINE.md):

- Placement: programs, ordered by linear program id (axis 0 fastest), go to PEs by a mapping strategy; a
  PE runs its programs one after another, starting the next when the previous one has finished.
- Scalar core: issues the program's commands in order, spending `scalar_instrs` cycles plus
  `scalar_issue_cycles` per engine command; it stalls while the target engine already has
  `cp_queue_depth_commands` commands queued, and until the end of a `scalar_blocking` command or of a
  command it executes itself (`Engine.SCALAR`: gathers/scatters, latency bound).
- CP: a command is released `cp_check_cycles` per CB reference after issue, and not before its
  dependencies ended: the fillers of the slots it reads, and for each slot it fills, the filler and every
  reader of the slot's previous occupant (seq - depth).
- Engines run their commands one at a time in issue order. DPE: MACs x passes / MACs-per-cycle of the
  dtype, plus a pipeline fill when the DPE was idle before. SE / VEC / RE / MLU: elements / per-cycle
  width, results available a latency later. DMA: issue (+ per-descriptor) cycles on the engine, then the
  memory (+ NoC hop) latency, then the transfer on the PE's read or write port, in order per port.
- Global memory: transfers are fluid flows. Each level (DRAM, SRAM) is shared max-min fairly among all
  flows on the chip in flight, each flow capped by its PE port; rates change whenever a flow starts or
  ends. Contiguous runs round up to 32-byte granules. Placement "llc": first touch of a byte comes from
  DRAM, later reads hit SRAM, stores write through to DRAM (no eviction; no allocation once full).

Not modelled: LS bank conflicts and LS bandwidth, NoC contention, DRAM page/channel effects, the RE
link's bandwidth, kernel launch (reported separately).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace
from mtia_xdsl.machine.config import MachineConfig

MAPPINGS = ("linear", "round_robin", "zigzag")
"""Program -> PE strategies: "linear" numbers PEs row-major, "round_robin" column-major (consecutive
programs land on different rows, spreading them over the memory edges), "zigzag" in serpentine order
(consecutive programs are NoC neighbours). ASSUMPTION: our reading of S8; program i goes to the i mod n-th
PE of that order."""

_WRITE_KINDS = frozenset({"dma_store", "scatter", "store"})
_EPS = 1e-9
_BYTE_TOLERANCE = 1e-4
_ENGINES = tuple(Engine)
_ENGINE_INDEX = {e: k for k, e in enumerate(_ENGINES)}
_DMA = _ENGINE_INDEX[Engine.DMA]
_SCALAR = _ENGINE_INDEX[Engine.SCALAR]
_N_ENGINES = len(_ENGINES)


class TimingError(ValueError):
    """A command trace the timing model cannot schedule (bad CB references, deadlock)."""


@dataclass(frozen=True, slots=True)
class CommandSpan:
    """When one command ran. Units: cycles from kernel start."""

    pe: int
    program: int
    """Index of the program in the list given to `simulate`."""
    index: int
    """Index of the command in its program."""
    engine: Engine
    kind: str
    loc: str
    issue_cycle: float
    start_cycle: float
    end_cycle: float


@dataclass
class MemoryTraffic:
    """Bytes moved per memory level over the whole kernel (chip). Units: bytes."""

    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    sram_read_bytes: float = 0.0
    sram_write_bytes: float = 0.0
    dram_transferred_bytes: float = 0.0
    """DRAM bytes moved by DMA including 32-byte granule rounding."""
    sram_transferred_bytes: float = 0.0
    """SRAM bytes moved by DMA including 32-byte granule rounding."""
    dma_dram_bytes: float = 0.0
    """Useful (unrounded) DRAM bytes moved by DMA; the roofline's bandwidth term uses these."""
    dma_sram_bytes: float = 0.0
    """Useful (unrounded) SRAM bytes moved by DMA."""
    scalar_access_bytes: float = 0.0
    """Bytes of scalar-core gathers/scatters (latency bound, not in the roofline's bandwidth term)."""
    ls_bytes: float = 0.0


@dataclass
class WorkTotals:
    """Ideal busy cycles at peak rate, summed over all PEs (chip). Units: PE-cycles."""

    dpe_cycles: float = 0.0
    se_cycles: float = 0.0
    vec_cycles: float = 0.0
    re_cycles: float = 0.0
    mlu_cycles: float = 0.0
    dpe_macs: int = 0
    dpe_flops: float = 0.0
    """2 x MACs x passes."""
    se_elems: int = 0
    vec_elems: int = 0


@dataclass
class Timeline:
    """Result of `simulate`: every command's span and the chip-level totals."""

    config: MachineConfig
    mapping: str
    grid: tuple[int, int, int]
    total_cycles: float
    spans: list[CommandSpan]
    pe_of_program: list[int]
    program_cycles: list[tuple[float, float]]
    """(start, end) of each program, in the order given to `simulate`."""
    engine_busy_cycles: dict[tuple[int, Engine], float]
    """(pe, engine) -> cycles with at least one command of that engine in flight."""
    traffic: MemoryTraffic
    work: WorkTotals
    ls_high_water_bytes: dict[int, int]
    """PE -> largest LS footprint (CB depth x tile bytes + extra) of the programs it ran."""
    scalar_issue_cycles: dict[int, float]
    """PE -> cycles its scalar core spent on instructions and command issue (not on Engine.SCALAR
    commands, which are in `engine_busy_cycles`)."""
    llc_resident_bytes: int = 0
    llc_overflowed: bool = False
    programs: list[ProgramTrace] = field(default_factory=list, repr=False)

    @property
    def pes_used(self) -> list[int]:
        """PEs that ran at least one program, sorted."""
        return sorted(set(self.pe_of_program))


def simulate(
    programs: Sequence[ProgramTrace],
    config: MachineConfig,
    mapping: str = "linear",
    grid: tuple[int, int, int] | None = None,
) -> Timeline:
    """Schedule every program's commands on the chip and return when each ran.

    Units: cycles. Deterministic: the same inputs always give the same cycles.
    Requires: `programs` holds one trace per program id of the launch.
    Raises: TimingError naming the kernel loc for inconsistent CB references or a deadlock;
    ValueError for an unknown mapping.
    """
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown program mapping {mapping!r}; expected one of {', '.join(MAPPINGS)}")
    grid = grid or _infer_grid(programs)
    pe_of_program = place_programs(programs, config, mapping, grid)
    sim = _Simulator(list(programs), config, pe_of_program)
    sim.run()
    return sim.timeline(mapping, grid)


def place_programs(
    programs: Sequence[ProgramTrace], config: MachineConfig, mapping: str, grid: tuple[int, int, int]
) -> list[int]:
    """Return the PE of each program under `mapping` (see MAPPINGS)."""
    order = _pe_order(config, mapping)
    gx, gy, _ = grid
    result = []
    for prog in programs:
        x, y, z = prog.program_id
        linear = x + gx * (y + gy * z)
        result.append(order[linear % len(order)])
    return result


def _pe_order(config: MachineConfig, mapping: str) -> list[int]:
    rows, cols = config.pe_rows, config.pe_cols
    if mapping == "linear":
        return list(range(rows * cols))
    if mapping == "round_robin":
        return [r * cols + c for c in range(cols) for r in range(rows)]
    return [r * cols + (c if r % 2 == 0 else cols - 1 - c) for r in range(rows) for c in range(cols)]


def _infer_grid(programs: Sequence[ProgramTrace]) -> tuple[int, int, int]:
    if not programs:
        return (1, 1, 1)
    return tuple(max(p.program_id[a] for p in programs) + 1 for a in range(3))  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------------
# Global memory: LLC coverage and fluid bandwidth pools
# ---------------------------------------------------------------------------------------------------


class _Coverage:
    """Set of byte addresses as sorted disjoint intervals [start, end)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.total = 0

    def covered(self, lo: int, hi: int) -> int:
        """Bytes of [lo, hi) already in the set."""
        i = bisect_right(self.ends, lo)
        j = bisect_left(self.starts, hi)
        return sum(max(0, min(self.ends[k], hi) - max(self.starts[k], lo)) for k in range(i, j))

    def add(self, lo: int, hi: int) -> None:
        """Insert [lo, hi), merging overlapping and adjacent intervals."""
        i = bisect_left(self.ends, lo)
        j = bisect_right(self.starts, hi)
        if i == j:
            self.starts.insert(i, lo)
            self.ends.insert(i, hi)
            self.total += hi - lo
            return
        new_lo, new_hi = min(lo, self.starts[i]), max(hi, self.ends[j - 1])
        removed = sum(self.ends[k] - self.starts[k] for k in range(i, j))
        self.starts[i:j] = [new_lo]
        self.ends[i:j] = [new_hi]
        self.total += (new_hi - new_lo) - removed


class _FlowGroup:
    """Flows of one direction in one pool: equal rates, tracked by virtual service time."""

    __slots__ = ("cap", "heap", "n", "rate", "served")

    def __init__(self, cap: float) -> None:
        self.cap = cap
        self.served = 0.0
        self.heap: list[tuple[float, int, object]] = []
        self.n = 0
        self.rate = 0.0


class _Pool:
    """A chip-wide memory level whose bandwidth all flows in flight share max-min fairly."""

    def __init__(self, index: int, bytes_per_cycle: float, caps: tuple[float, float]) -> None:
        self.index = index
        self.bytes_per_cycle = bytes_per_cycle
        self.groups = (_FlowGroup(caps[0]), _FlowGroup(caps[1]))
        self.now = 0.0
        self.version = 0

    def advance(self, now: float) -> None:
        dt = now - self.now
        if dt > 0:
            for g in self.groups:
                if g.n:
                    g.served += g.rate * dt
        self.now = now

    def recompute_rates(self) -> None:
        active = [g for g in self.groups if g.n]
        if not active:
            return
        remaining, flows = self.bytes_per_cycle, sum(g.n for g in active)
        for g in sorted(active, key=lambda g: g.cap):
            share = remaining / flows
            g.rate = min(g.cap, share)
            remaining -= g.rate * g.n
            flows -= g.n

    def next_event_time(self) -> float | None:
        best = None
        for g in self.groups:
            if g.heap:
                t = self.now + max(0.0, g.heap[0][0] - g.served) / g.rate
                best = t if best is None or t < best else best
        return best

    def pop_finished(self) -> list[object]:
        done = []
        for g in self.groups:
            # tolerance in bytes: large enough that a remainder never rounds to a zero time step
            tolerance = max(_BYTE_TOLERANCE, _EPS * g.served)
            while g.heap and g.heap[0][0] <= g.served + tolerance:
                done.append(heapq.heappop(g.heap)[2])
                g.n -= 1
        return done


# ---------------------------------------------------------------------------------------------------
# Per-program and per-PE state
# ---------------------------------------------------------------------------------------------------


class _Run:
    """Scheduling state of one program on its PE."""

    def __init__(self, index: int, prog: ProgramTrace, config: MachineConfig) -> None:
        self.index = index
        self.prog = prog
        cmds = prog.commands
        self.cmds = cmds
        n = len(cmds)
        self.issue_t = [-1.0] * n
        self.start_t = [0.0] * n
        self.dep_ready = [0.0] * n
        self.release_extra = [(len(c.waits) + len(c.fills)) * config.cp_check_cycles for c in cmds]
        self.engine = [_ENGINE_INDEX[c.engine] for c in cmds]
        self.queues: list[list[int]] = [[] for _ in _ENGINES]
        for i, e in enumerate(self.engine):
            self.queues[e].append(i)
        self.head = [0] * _N_ENGINES
        self.pending = [0] * _N_ENGINES
        self.dependents, self.deps_left = _build_dependencies(prog)
        self.ended = 0
        self.scalar_end: float | None = None
        self.start_cycle = 0.0
        self.done_queued = False
        """The program-done event is queued (it must be queued once: the next program starts on it)."""


def _build_dependencies(prog: ProgramTrace) -> tuple[list[list[int]], list[int]]:
    """Return (dependents of each command, number of dependencies of each command)."""
    cmds = prog.commands
    filler: dict[tuple[int, int], int] = {}
    readers: dict[tuple[int, int], list[int]] = {}
    for i, c in enumerate(cmds):
        for ref in c.fills:
            key = (ref.cb, ref.seq)
            if ref.cb not in prog.cb_depth:
                raise TimingError(f"{c.loc}: {c.kind} fills circular buffer {ref.cb}, which has no depth")
            if key in filler:
                raise TimingError(f"{c.loc}: {c.kind} fills slot {ref.seq} of cb {ref.cb} a second time")
            filler[key] = i
        for ref in c.waits:
            readers.setdefault((ref.cb, ref.seq), []).append(i)
    deps: list[set[int]] = [set() for _ in cmds]
    for i, c in enumerate(cmds):
        for ref in c.waits:
            key = (ref.cb, ref.seq)
            if key not in filler:
                raise TimingError(f"{c.loc}: {c.kind} reads slot {ref.seq} of cb {ref.cb}, which nothing fills")
            deps[i].add(filler[key])
        for ref in c.fills:
            prev = (ref.cb, ref.seq - prog.cb_depth[ref.cb])
            if prev[1] < 0:
                continue
            if prev in filler:
                deps[i].add(filler[prev])
            deps[i].update(readers.get(prev, ()))
    for i, hazards in enumerate(_memory_hazards(cmds)):
        deps[i].update(hazards)
    dependents: list[list[int]] = [[] for _ in cmds]
    deps_left = []
    for i, d in enumerate(deps):
        d.discard(i)
        deps_left.append(len(d))
        for j in sorted(d):
            dependents[j].append(i)
    return dependents, deps_left


def _span(c: Command) -> tuple[int, int] | None:
    """[first, last) global byte address of a command's accesses, or None if it touches none."""
    if c.global_read_bytes == 0 and c.global_write_bytes == 0:
        return None
    if c.global_ranges:
        return min(a for a, _ in c.global_ranges), max(a + n for a, n in c.global_ranges)
    return c.global_extent


def _ranges_overlap(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    """Whether two lists of (address, nbytes) runs share a byte; unknown (empty) lists overlap."""
    if not a or not b:
        return True
    ia, ib = sorted(a), sorted(b)
    i = j = 0
    while i < len(ia) and j < len(ib):
        (sa, na), (sb, nb) = ia[i], ib[j]
        if sa < sb + nb and sb < sa + na:
            return True
        if sa + na <= sb + nb:
            i += 1
        else:
            j += 1
    return False


def _memory_hazards(cmds: Sequence[Command]) -> list[set[int]]:
    """For each command, the earlier commands of the program it must follow through global memory.

    A command reading or writing bytes that an earlier command writes (or writing bytes an earlier
    command reads) starts after that command ended, as the DMA engine's ordering guarantees; loads and
    stores of one program to the same memory otherwise overlap in time.
    """
    hazards: list[set[int]] = [set() for _ in cmds]
    writes_seen: list[tuple[int, int, int]] = []  # (index, first, last)
    reads_seen: list[tuple[int, int, int]] = []
    for i, c in enumerate(cmds):
        span = _span(c)
        if span is None:
            continue
        writes = c.global_write_bytes > 0
        for j, lo, hi in writes_seen + (reads_seen if writes else []):
            if lo < span[1] and span[0] < hi and _ranges_overlap(c.global_ranges, cmds[j].global_ranges):
                hazards[i].add(j)
        (writes_seen if writes else reads_seen).append((i, span[0], span[1]))
    return hazards


class _PE:
    """One PE: its program queue, engines and DMA ports."""

    def __init__(self, pe: int, program_indices: list[int]) -> None:
        self.pe = pe
        self.queue = program_indices
        self.next_program = 0
        self.run: _Run | None = None
        self.engine_free = [0.0] * _N_ENGINES
        self.engine_used = [False] * _N_ENGINES
        self.try_at = [-1.0] * _N_ENGINES
        self.scalar_busy = 0.0
        self.scalar_wait: tuple[str, object] | None = None
        self.dma_inflight = 0
        self.xfer_fifo: tuple[deque[list], deque[list]] = (deque(), deque())
        self.port_busy = [False, False]
        self.ls_high_water = 0


# Event kinds
_E_SCALAR, _E_TRY, _E_END, _E_XFER, _E_POOL, _E_DONE = range(6)


class _Simulator:
    """The event loop; one instance per `simulate` call."""

    def __init__(self, programs: list[ProgramTrace], config: MachineConfig, pe_of_program: list[int]) -> None:
        self.programs = programs
        self.config = config
        self.pe_of_program = pe_of_program
        per_pe: dict[int, list[int]] = {}
        for i, pe in enumerate(pe_of_program):
            per_pe.setdefault(pe, []).append(i)
        self.pes = {pe: _PE(pe, idxs) for pe, idxs in sorted(per_pe.items())}
        self.events: list[tuple[float, int, int, object, object]] = []
        self.seq = 0
        caps = (float(config.dma_read_bytes_per_cycle), float(config.dma_write_bytes_per_cycle))
        self.pools = (
            _Pool(0, config.dram_bytes_per_cycle, caps),
            _Pool(1, config.sram_bytes_per_cycle, caps),
        )
        self.coverage = _Coverage()
        self.llc_overflowed = False
        self.traffic = MemoryTraffic()
        self.work = WorkTotals()
        self.span_rows: list[tuple[int, int, int, Command, float, float, float]] = []
        self.program_cycles = [(0.0, 0.0)] * len(programs)
        self.now = 0.0
        self.handlers: dict[int, Callable[[object, object], None]] = {
            _E_SCALAR: self._on_scalar,
            _E_TRY: self._on_try,
            _E_END: self._on_end,
            _E_XFER: self._on_xfer,
            _E_POOL: self._on_pool,
            _E_DONE: self._on_done,
        }

    # ---- event plumbing ----

    def push(self, t: float, kind: int, a: object, b: object = None) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, a, b))

    def run(self) -> None:
        for pe in self.pes.values():
            self._start_next_program(pe, 0.0)
        events, handlers = self.events, self.handlers
        while events:
            t, _, kind, a, b = heapq.heappop(events)
            self.now = t
            handlers[kind](a, b)
        for pe in self.pes.values():
            if pe.run is not None or pe.next_program < len(pe.queue):
                self._raise_deadlock(pe)

    # ---- programs ----

    def _start_next_program(self, pe: _PE, t: float) -> None:
        if pe.next_program >= len(pe.queue):
            pe.run = None
            return
        index = pe.queue[pe.next_program]
        pe.next_program += 1
        prog = self.programs[index]
        run = _Run(index, prog, self.config)
        run.start_cycle = t
        pe.run = run
        pe.ls_high_water = max(pe.ls_high_water, prog.ls_footprint_bytes())
        self._schedule_scalar(pe, 0, t)

    def _schedule_scalar(self, pe: _PE, i: int, t: float) -> None:
        """The scalar core starts on command i of the current program at t."""
        run = pe.run
        assert run is not None
        cfg = self.config
        if i >= len(run.cmds):
            tail = run.prog.tail_scalar_instrs * cfg.scalar_cycles_per_instr
            pe.scalar_busy += tail
            run.scalar_end = t + tail
            self._check_program_done(pe)
            return
        c = run.cmds[i]
        cost = c.scalar_instrs * cfg.scalar_cycles_per_instr
        if c.engine is not Engine.SCALAR:
            cost += cfg.scalar_issue_cycles
        pe.scalar_busy += cost
        self.push(t + cost, _E_SCALAR, pe, i)

    def _on_scalar(self, pe: object, i: object) -> None:
        assert isinstance(pe, _PE) and isinstance(i, int)
        run = pe.run
        assert run is not None
        c = run.cmds[i]
        e = run.engine[i]
        if e != _SCALAR and run.pending[e] >= self.config.cp_queue_depth_commands:
            pe.scalar_wait = ("queue", (e, i))
            return
        run.issue_t[i] = self.now
        run.pending[e] += 1
        if c.scalar_blocking or e == _SCALAR:
            pe.scalar_wait = ("block", i)
        else:
            self._schedule_scalar(pe, i + 1, self.now)
        self._try_start(pe, e)

    def _check_program_done(self, pe: _PE) -> None:
        run = pe.run
        assert run is not None
        if run.ended < len(run.cmds) or run.scalar_end is None or run.done_queued:
            return
        run.done_queued = True
        finish = max(self.now, run.scalar_end)
        self.push(finish, _E_DONE, pe, run)

    def _on_done(self, pe: object, run: object) -> None:
        assert isinstance(pe, _PE) and isinstance(run, _Run)
        self.program_cycles[run.index] = (run.start_cycle, self.now)
        self._start_next_program(pe, self.now)

    # ---- engines ----

    def _on_try(self, pe: object, e: object) -> None:
        assert isinstance(pe, _PE) and isinstance(e, int)
        if pe.run is not None:
            self._try_start(pe, e)

    def _try_start(self, pe: _PE, e: int) -> None:
        """Start the head command of engine e if it can start now; else schedule a retry when it can."""
        run = pe.run
        assert run is not None
        queue = run.queues[e]
        h = run.head[e]
        if h >= len(queue):
            return
        i = queue[h]
        issued = run.issue_t[i]
        if issued < 0 or run.deps_left[i] > 0:
            return  # retried at issue / at the last dependency's end
        if e == _DMA and pe.dma_inflight >= self.config.dma_outstanding_commands:
            return  # retried when a DMA command ends
        release = max(issued + run.release_extra[i], run.dep_ready[i])
        start = max(release, pe.engine_free[e])
        if start > self.now:
            self._push_try(pe, e, start)
            return
        run.head[e] = h + 1
        run.pending[e] -= 1
        run.start_t[i] = self.now
        if pe.scalar_wait is not None and pe.scalar_wait[0] == "queue":
            waiting_engine, waiting_index = pe.scalar_wait[1]  # type: ignore[misc]
            if waiting_engine == e:
                pe.scalar_wait = None
                self.push(self.now, _E_SCALAR, pe, waiting_index)
        c = run.cmds[i]
        if e == _DMA:
            self._start_dma(pe, run, i, c)
        else:
            back_to_back = pe.engine_used[e] and release <= pe.engine_free[e]
            self._start_compute(pe, run, i, e, back_to_back)
        pe.engine_used[e] = True

    def _push_try(self, pe: _PE, e: int, t: float) -> None:
        """Schedule a start attempt of engine e at t unless one is already scheduled then or none is due."""
        run = pe.run
        if run is None or run.head[e] >= len(run.queues[e]):
            return
        if pe.try_at[e] != t:
            pe.try_at[e] = t
            self.push(t, _E_TRY, pe, e)

    def _start_compute(self, pe: _PE, run: _Run, i: int, e: int, back_to_back: bool) -> None:
        c = run.cmds[i]
        occupancy, latency = self._compute_cost(pe, c, back_to_back)
        pe.engine_free[e] = self.now + occupancy
        self.traffic.ls_bytes += c.ls_bytes
        self.push(self.now + occupancy + latency, _E_END, pe, (run, i))
        self._push_try(pe, e, self.now + occupancy)

    def _compute_cost(self, pe: _PE, c: Command, back_to_back: bool) -> tuple[float, float]:
        """Return (engine occupancy, extra latency until results are visible) of a non-DMA command."""
        cfg, w, e = self.config, self.work, c.engine
        if e is Engine.DPE:
            ideal = c.macs * c.dpe_passes / cfg.dpe_macs_per_cycle(c.dtype)
            w.dpe_cycles += ideal
            w.dpe_macs += c.macs
            w.dpe_flops += 2.0 * c.macs * c.dpe_passes
            fill = 0 if back_to_back else cfg.dpe_fill_cycles
            return max(1, math.ceil(ideal)) + fill, 0.0
        if e is Engine.SE:
            ideal = c.elems / cfg.se_elems_per_cycle
            w.se_cycles += ideal
            w.se_elems += c.elems
            lat = cfg.se_lut_latency_cycles if c.lut else cfg.se_alu_latency_cycles
            return max(1, math.ceil(ideal)), lat
        if e is Engine.VEC:
            ideal = c.elems / cfg.vec_elems_per_cycle(c.dtype)
            w.vec_cycles += ideal
            w.vec_elems += c.elems
            return max(1, math.ceil(ideal)), cfg.vec_latency_cycles
        if e is Engine.RE:
            ideal = c.elems / cfg.re_elems_per_cycle
            w.re_cycles += ideal
            return max(1, math.ceil(ideal)), cfg.re_latency_cycles + c.re_hops * cfg.re_hop_cycles
        if e is Engine.MLU:
            ideal = c.elems / cfg.mlu_elems_per_cycle
            w.mlu_cycles += ideal
            return max(1, math.ceil(ideal)), cfg.mlu_latency_cycles
        return self._scalar_access_cost(pe, c), 0.0

    def _scalar_access_cost(self, pe: _PE, c: Command) -> float:
        """Cycles the scalar core spends on element accesses: global (gathers, scalar loads) or LS (cb_read).

        The first access pays the full latency; the rest overlap `scalar_outstanding_loads` at a time.
        """
        cfg = self.config
        nbytes = c.global_read_bytes + c.global_write_bytes
        if nbytes == 0:
            if c.elems == 0:
                return 0.0
            return cfg.scalar_ls_latency_cycles + (c.elems - 1) * cfg.scalar_cycles_per_instr
        dram, sram = self._split_levels(c, c.global_write_bytes > c.global_read_bytes)
        level = "dram" if dram > 0 else "sram"
        self._count_traffic(c, dram, sram)
        self.traffic.scalar_access_bytes += nbytes
        latency = cfg.level_latency_cycles(level) + cfg.noc_hops(pe.pe) * cfg.noc_hop_cycles
        per_elem = max(1.0, latency / cfg.scalar_outstanding_loads)
        return latency + max(0, c.elems - 1) * per_elem

    # ---- DMA ----

    def _start_dma(self, pe: _PE, run: _Run, i: int, c: Command) -> None:
        cfg = self.config
        issue = cfg.dma_issue_cycles + c.descriptors * cfg.dma_descriptor_cycles
        pe.engine_free[_DMA] = self.now + issue
        pe.dma_inflight += 1
        self.traffic.ls_bytes += c.ls_bytes
        write = c.kind in _WRITE_KINDS or c.global_write_bytes > c.global_read_bytes
        dram, sram = self._split_levels(c, write)
        self._count_traffic(c, dram, sram)
        raw = dram + sram
        rounded = self._granule_bytes(c, raw)
        scale = rounded / raw if raw > 0 else 0.0
        parts = [(pool, b * scale, b) for pool, b in ((0, dram), (1, sram)) if b > 0]
        level = "dram" if dram > 0 or (raw == 0 and cfg.global_placement != "sram") else "sram"
        ready = self.now + issue + cfg.level_latency_cycles(level) + cfg.noc_hops(pe.pe) * cfg.noc_hop_cycles
        direction = 1 if write else 0
        pe.xfer_fifo[direction].append([run, i, ready, parts, direction])
        self.push(ready, _E_XFER, pe, direction)
        self._push_try(pe, _DMA, self.now + issue)

    def _granule_bytes(self, c: Command, raw: float) -> float:
        """Bytes moved once every contiguous run is rounded out to whole granules."""
        g = self.config.dma_granule_bytes
        total = c.global_read_bytes + c.global_write_bytes
        if c.global_ranges and sum(n for _, n in c.global_ranges) == total:
            spans = sum(-(-(a + n) // g) * g - (a // g) * g for a, n in c.global_ranges if n > 0)
            return raw * spans / total if total else 0.0
        runs = max(1, c.descriptors)
        per_run = total / runs
        return raw * (runs * math.ceil(per_run / g) * g) / total if total else 0.0

    def _split_levels(self, c: Command, write: bool) -> tuple[float, float]:
        """Return (DRAM bytes, SRAM bytes) of a command under the config's placement."""
        placement = self.config.global_placement
        nbytes = float(c.global_read_bytes + c.global_write_bytes)
        if placement == "dram":
            return nbytes, 0.0
        if placement == "sram":
            return 0.0, nbytes
        if write:
            self._llc_allocate(c.global_ranges)
            return nbytes, 0.0  # write-through
        if not c.global_ranges:
            return nbytes, 0.0  # no addresses: assume a miss
        touched = sum(n for _, n in c.global_ranges)
        if touched <= 0:
            return nbytes, 0.0
        cached = sum(self.coverage.covered(a, a + n) for a, n in c.global_ranges)
        self._llc_allocate(c.global_ranges)
        hit_fraction = min(1.0, cached / touched)
        return nbytes * (1.0 - hit_fraction), nbytes * hit_fraction

    def _llc_allocate(self, ranges: tuple[tuple[int, int], ...]) -> None:
        for a, n in ranges:
            if n <= 0:
                continue
            if self.coverage.total + n > self.config.llc_bytes:
                self.llc_overflowed = True
                return
            self.coverage.add(a, a + n)

    def _count_traffic(self, c: Command, dram: float, sram: float) -> None:
        t = self.traffic
        total = dram + sram
        if total <= 0:
            return
        write_fraction = c.global_write_bytes / total
        t.dram_write_bytes += dram * write_fraction
        t.dram_read_bytes += dram * (1.0 - write_fraction)
        t.sram_write_bytes += sram * write_fraction
        t.sram_read_bytes += sram * (1.0 - write_fraction)

    def _on_xfer(self, pe: object, direction: object) -> None:
        assert isinstance(pe, _PE) and isinstance(direction, int)
        if pe.port_busy[direction]:
            return
        fifo = pe.xfer_fifo[direction]
        if not fifo or fifo[0][2] > self.now:
            return
        entry = fifo.popleft()
        pe.port_busy[direction] = True
        self._next_part(pe, entry)

    def _next_part(self, pe: _PE, entry: list) -> None:
        """Start the next memory-level part of a transfer, or finish the DMA command."""
        run, i, _, parts, direction = entry
        if not parts:
            pe.port_busy[direction] = False
            pe.dma_inflight -= 1
            self._finish(pe, run, i)
            self._try_start(pe, _DMA)
            self.push(self.now, _E_XFER, pe, direction)
            return
        pool_index, nbytes, useful = parts.pop(0)
        pool = self.pools[pool_index]
        if pool_index == 0:
            self.traffic.dram_transferred_bytes += nbytes
            self.traffic.dma_dram_bytes += useful
        else:
            self.traffic.sram_transferred_bytes += nbytes
            self.traffic.dma_sram_bytes += useful
        pool.advance(self.now)
        group = pool.groups[direction]
        self.seq += 1
        heapq.heappush(group.heap, (group.served + nbytes, self.seq, (pe, entry)))
        group.n += 1
        self._reschedule(pool)

    def _reschedule(self, pool: _Pool) -> None:
        pool.recompute_rates()
        pool.version += 1
        t = pool.next_event_time()
        if t is not None:
            self.push(t, _E_POOL, pool, pool.version)

    def _on_pool(self, pool: object, version: object) -> None:
        assert isinstance(pool, _Pool)
        if version != pool.version:
            return
        pool.advance(self.now)
        done = pool.pop_finished()
        self._reschedule(pool)
        for token in done:
            pe, entry = token  # type: ignore[misc]
            self._next_part(pe, entry)

    # ---- command end ----

    def _on_end(self, pe: object, payload: object) -> None:
        assert isinstance(pe, _PE)
        run, i = payload  # type: ignore[misc]
        self._finish(pe, run, i)

    def _finish(self, pe: _PE, run: _Run, i: int) -> None:
        now = self.now
        c = run.cmds[i]
        run.ended += 1
        self.span_rows.append((pe.pe, run.index, i, c, run.issue_t[i], run.start_t[i], now))
        for d in run.dependents[i]:
            run.deps_left[d] -= 1
            if now > run.dep_ready[d]:
                run.dep_ready[d] = now
            if run.deps_left[d] == 0:
                self._try_start(pe, run.engine[d])
        if pe.scalar_wait is not None and pe.scalar_wait == ("block", i):
            pe.scalar_wait = None
            self._schedule_scalar(pe, i + 1, now)
        self._check_program_done(pe)

    # ---- results ----

    def _raise_deadlock(self, pe: _PE) -> None:
        run = pe.run
        if run is None:
            raise TimingError(f"PE {pe.pe} did not start all its programs")
        for e, engine in enumerate(_ENGINES):
            h = run.head[e]
            if h < len(run.queues[e]):
                c = run.cmds[run.queues[e][h]]
                raise TimingError(
                    f"{c.loc}: deadlock: {c.kind} on {engine.value} never started "
                    f"(program {run.prog.program_id}, PE {pe.pe}); a slot it reads or fills is never "
                    "released: check cb depths and pop order"
                )
        raise TimingError(f"deadlock in program {run.prog.program_id} on PE {pe.pe}")

    def timeline(self, mapping: str, grid: tuple[int, int, int]) -> Timeline:
        total = max((end for _, end in self.program_cycles), default=0.0)
        spans = [
            CommandSpan(pe, prog, i, c.engine, c.kind, c.loc, issue, start, end)
            for pe, prog, i, c, issue, start, end in self.span_rows
        ]
        return Timeline(
            config=self.config,
            mapping=mapping,
            grid=grid,
            total_cycles=total,
            spans=spans,
            pe_of_program=self.pe_of_program,
            program_cycles=self.program_cycles,
            engine_busy_cycles=_busy_cycles(spans),
            traffic=self.traffic,
            work=self.work,
            ls_high_water_bytes={pe.pe: pe.ls_high_water for pe in self.pes.values()},
            scalar_issue_cycles={pe.pe: pe.scalar_busy for pe in self.pes.values()},
            llc_resident_bytes=self.coverage.total,
            llc_overflowed=self.llc_overflowed,
            programs=self.programs,
        )


def _busy_cycles(spans: list[CommandSpan]) -> dict[tuple[int, Engine], float]:
    """Union of span intervals per (PE, engine)."""
    by_key: dict[tuple[int, Engine], list[tuple[float, float]]] = {}
    for s in spans:
        by_key.setdefault((s.pe, s.engine), []).append((s.start_cycle, s.end_cycle))
    busy = {}
    for key in sorted(by_key, key=lambda k: (k[0], k[1].value)):
        total, cur_start, cur_end = 0.0, None, None
        for start, end in sorted(by_key[key]):
            if cur_end is None or start > cur_end:
                if cur_end is not None and cur_start is not None:
                    total += cur_end - cur_start
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        if cur_end is not None and cur_start is not None:
            total += cur_end - cur_start
        busy[key] = total
    return busy
