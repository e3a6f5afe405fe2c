"""Timeline: what the timing model (`machine/timing.py`) returns: command spans and chip-level totals."""

from __future__ import annotations

import bisect
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import chain
from operator import attrgetter
from typing import Final

import numpy as np

from mtia_xdsl.machine.commands import Command, Engine, ProgramTrace
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.memory import MemoryTraffic


def _frozen_reduce(obj: object) -> tuple[type, tuple[object, ...]]:
    """`__reduce__` of a frozen dataclass of this module: rebuilt through its constructor from its fields, as
    copy and pickle otherwise set the fields one by one, which a frozen class compiled by mypyc refuses."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj))  # type: ignore[arg-type]


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

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return _frozen_reduce(self)


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

    def add(self, other: WorkTotals) -> None:
        """Add `other`'s work to this one's, field by field."""
        self.dpe_cycles += other.dpe_cycles
        self.se_cycles += other.se_cycles
        self.vec_cycles += other.vec_cycles
        self.re_cycles += other.re_cycles
        self.mlu_cycles += other.mlu_cycles
        self.dpe_macs += other.dpe_macs
        self.dpe_flops += other.dpe_flops
        self.se_elems += other.se_elems
        self.vec_elems += other.vec_elems


@dataclass(frozen=True, slots=True)
class LineCost:
    """What the commands issued from one kernel source line cost, summed over every program of a launch.

    Units: cycles are command cycles (each command's end - start: engine occupancy plus, for DMA, memory
    latency and transfer; commands of different engines and PEs overlap, so lines do not add up to the
    kernel's time); bytes are useful global bytes read + written and LS bytes read + written.
    """

    loc: str
    """"file:line" of the kernel source."""
    commands: int
    cycles: float
    global_bytes: float
    ls_bytes: float
    engines: tuple[str, ...]
    """Engines its commands ran on (Engine values), in first-seen order."""

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return _frozen_reduce(self)


def line_key(loc: str) -> str:
    """Return the "file:line" of a "file:line:col" location (unchanged if it has no column)."""
    head, sep, col = loc.rpartition(":")
    return head if sep and col.isdigit() and ":" in head else loc


SpanRow = tuple[int, int, int, Command, float, float, float]
"""(pe, program, index, command, issue, start, end): a CommandSpan before it is built."""


PACK_EVERY: Final = 8192
"""Values gathered in a list before they are packed into an array (one call packs many)."""


def pack_into(packed: array, values: list, code: str) -> None:
    """Append `values` to `packed`, an array of typecode `code` ("d" or "q"): the same as `packed.fromlist`,
    in a fraction of its time (fromlist parses each item as a call argument; struct converts them directly)."""
    if values:
        packed.frombytes(struct.pack(f"{len(values)}{code}", *values))


class CommandCycles:
    """Every command's (issue, start, end) cycle, packed in three flat float arrays (8 bytes a command each)
    that hold the programs' commands one program after another, in the order the programs finished.

    `offset[k]` and `count[k]`: where program k's commands begin in the arrays and how many it has;
    `engine_of[k]`: the queue index of each of its commands (the timing model's, `program_shape.QUEUES`; a
    list shared by the programs of one shape); `queue_engines[q]`: the engine of queue index q; `finished`:
    the program indices in the order they finished. Units: cycles. Call `close` after the last `add`.
    """

    __slots__ = (
        "count", "end", "engine_of", "finished", "issue", "offset", "pending", "queue_engines", "size", "start",
    )  # fmt: skip

    def __init__(self, n_programs: int, queue_engines: tuple[Engine, ...]) -> None:
        self.queue_engines = queue_engines
        self.issue: array[float] = array("d")
        self.start: array[float] = array("d")
        self.end: array[float] = array("d")
        self.pending: tuple[list[float], list[float], list[float]] = ([], [], [])
        """Cycles added but not yet packed (issue, start, end)."""
        self.size = 0
        self.offset = [0] * n_programs
        self.count = [0] * n_programs
        self.engine_of: list[list[int]] = [[]] * n_programs
        self.finished: list[int] = []

    def add(self, k: int, engine: list[int], issue: list[float], start: list[float], end: list[float]) -> None:
        """Append program k's commands: the queue index and the issue, start and end cycle of each."""
        self.offset[k] = self.size
        self.count[k] = len(start)
        self.size += len(start)
        self.engine_of[k] = engine
        self.finished.append(k)
        pending = self.pending
        pending[0].extend(issue)
        pending[1].extend(start)
        pending[2].extend(end)
        if len(pending[1]) >= PACK_EVERY:
            self.close()

    def close(self) -> None:
        """Pack the cycles added since the last call."""
        for packed, values in zip((self.issue, self.start, self.end), self.pending, strict=True):
            pack_into(packed, values, "d")
            values.clear()

    def program(self, k: int) -> tuple[array[float], array[float], array[float]]:
        """(issue, start, end) cycle of each command of program k, as float arrays of their own."""
        a = self.offset[k]
        b = a + self.count[k]
        return self.issue[a:b], self.start[a:b], self.end[a:b]

    def engines(self) -> np.ndarray:
        """The queue index of every command, in the order of the arrays."""
        engine_of = self.engine_of
        return np.fromiter(chain.from_iterable([engine_of[k] for k in self.finished]), np.int64, self.size)

    def program_order(self) -> np.ndarray:
        """Positions in the arrays of every command, program 0's commands first, then program 1's, ..."""
        count = np.asarray(self.count, dtype=np.int64)
        first = np.cumsum(count) - count
        shift = np.asarray(self.offset, dtype=np.int64) - first
        return np.arange(int(count.sum()), dtype=np.int64) + np.repeat(shift, count)


@dataclass
class Timeline:
    """Result of `simulate`: every command's span and the chip-level totals."""

    config: MachineConfig
    mapping: str
    grid: tuple[int, int, int]
    total_cycles: float
    end_order: Sequence[int] = field(repr=False)
    """Commands in the order they ended, each as its index in the concatenation of all programs' commands."""
    pe_of_program: list[int]
    program_cycles: list[tuple[float, float]]
    """(start, end) of each program, in the order given to `simulate`."""
    traffic: MemoryTraffic
    work: WorkTotals
    ls_high_water_bytes: dict[int, int]
    """PE -> largest LS footprint (CB depth x tile bytes + extra) of the programs it ran."""
    scalar_issue_cycles: dict[int, float]
    """PE -> cycles its scalar core spent on instructions and command issue (not on Engine.SCALAR
    commands, which are in `engine_busy_cycles`)."""
    dma_bound_cycles: dict[int, float] = field(default_factory=dict)
    """PE -> cycles its DMA needs at least: the largest of its engine's issue cycles (one command at a time),
    each port's granule-rounded bytes at the per-PE port rate (one transfer at a time), and the least
    in-flight time of its commands (issue + memory latency + transfer) over the commands it keeps in flight."""
    llc_resident_bytes: int = 0
    llc_overflowed: bool = False
    write_behind_end_cycle: float = 0.0
    """When the last store that the LLC wrote on to DRAM behind its PE reached DRAM (`llc_write_behind`;
    0: none); the kernel ends no earlier."""
    programs: list[ProgramTrace] = field(default_factory=list, repr=False)
    cycles: CommandCycles | None = field(default=None, repr=False)
    """Every command's (issue, start, end) cycle, packed (None for a totals-only timeline)."""
    busy_totals: dict[tuple[int, Engine], float] | None = field(default=None, repr=False)
    """`engine_busy_cycles` as summed while the launch ran, for a totals-only timeline; None: computed from
    `cycles` when first read."""
    line_totals: list[LineCost] | None = field(default=None, repr=False)
    """The per-line costs (`line_costs`) summed while the launch ran, for a totals-only timeline (`simulate`
    with `keep_commands=False`), which keeps no command, `command_cycles` or `end_order` entries; None: the
    timeline keeps every command and `line_costs` sums them."""

    @property
    def totals_only(self) -> bool:
        """Whether the timeline keeps only totals (no command spans; see `line_totals`)."""
        return self.line_totals is not None

    def _require_commands(self, what: str) -> None:
        if self.line_totals is not None:
            raise ValueError(
                f"{what} needs every command's cycles, but this launch kept totals only "
                '(timeline="totals"); run it with timeline="full" (the default)'
            )

    @cached_property
    def engine_busy_cycles(self) -> dict[tuple[int, Engine], float]:
        """(pe, engine) -> cycles with at least one command of that engine in flight (`busy_cycles`; computed
        on first read for a timeline that keeps every command)."""
        if self.busy_totals is not None:
            return self.busy_totals
        cycles = self.cycles
        if cycles is None:
            return {}
        return busy_cycles(self.pe_of_program, cycles, cycles.queue_engines)

    @cached_property
    def command_cycles(self) -> list[tuple[Sequence[float], Sequence[float], Sequence[float]]]:
        """Per program (in the order given to `simulate`): (issue, start, end) cycle of each of its commands
        (float arrays; built on first use; empty for a totals-only timeline)."""
        cycles = self.cycles
        if cycles is None:
            return []
        return [cycles.program(k) for k in range(len(cycles.offset))]

    @cached_property
    def span_rows(self) -> list[SpanRow]:
        """Every command's span as a tuple, in the order commands ended (built on first use).

        Raises: ValueError for a totals-only timeline."""
        self._require_commands("the command spans")
        owner: list[int] = []
        first: list[int] = []
        for k, prog in enumerate(self.programs):
            first.append(len(owner))
            owner.extend([k] * len(prog.commands))
        rows: list[SpanRow] = []
        cycles = self.cycles
        assert cycles is not None
        issue, start, end, offset = cycles.issue, cycles.start, cycles.end, cycles.offset
        for g in self.end_order:
            k = owner[g]
            i = g - first[k]
            p = offset[k] + i
            rows.append((self.pe_of_program[k], k, i, self.programs[k].commands[i], issue[p], start[p], end[p]))
        return rows

    @cached_property
    def spans(self) -> list[CommandSpan]:
        """Every command's span, in the order commands ended (built on first use)."""
        return [
            CommandSpan(pe, prog, i, c.engine, c.kind, c.loc, issue, start, end)
            for pe, prog, i, c, issue, start, end in self.span_rows
        ]

    def line_costs(self) -> list[LineCost]:
        """Cost of each kernel source line (see LineCost), most command cycles first."""
        if self.line_totals is not None:
            return self.line_totals
        assert self.cycles is not None
        return lines_of(line_sums(self.programs, self.cycles))

    @property
    def command_count(self) -> int:
        """Commands scheduled (cheaper than len(spans))."""
        return len(self.end_order)

    @property
    def pes_used(self) -> list[int]:
        """PEs that ran at least one program, sorted."""
        return sorted(set(self.pe_of_program))


def command_bytes(c: Command) -> tuple[float, float]:
    """(global bytes read + written, LS bytes) of one command: what `LineCost` sums per source line."""
    return c.global_read_bytes + c.global_write_bytes, c.ls_bytes


def _add_command(a: list, c: Command, start: float, end: float) -> None:
    """Add one command (that ran from `start` to `end`) to its loc's sums `a` ([commands, cycles, global bytes,
    LS bytes, engines]; the engines are the caller's)."""
    a[0] += 1
    a[1] += end - start
    global_bytes, ls_bytes = command_bytes(c)
    a[2] += global_bytes
    a[3] += ls_bytes


def add_line_costs(
    acc: dict[str, list], commands: Sequence[Command], start: Sequence[float], end: Sequence[float]
) -> None:
    """Add the commands' costs to `acc` (kernel loc -> [commands, cycles, global bytes, LS bytes, engines]),
    the sums `lines_of` groups by source line."""
    for c, s, e in zip(commands, start, end, strict=False):
        a = acc.get(c.loc)
        if a is None:
            a = acc[c.loc] = [0, 0.0, 0.0, 0.0, {}]
        _add_command(a, c, s, e)
        a[4][c.engine] = None  # the member, not its value: an Enum's .value is a slow descriptor


STRUCTURES_KEPT: Final = 64
"""Program structures whose per-command sums `LineSums` remembers at most (it starts afresh past this)."""


class LineSums:
    """`add_line_costs` of finished programs, one program at a time, into `acc`: the same sums added in the same
    order. The first program of a `ProgramTrace.structure` adds its commands as `add_line_costs` does; a later
    one of that structure (the same loc and engine per command) adds each command's cost to the sums its
    command in that position went to, reading only its bytes."""

    __slots__ = ("acc", "targets")

    def __init__(self) -> None:
        self.acc: dict[str, list] = {}
        self.targets: dict[int, tuple[object, list[list]]] = {}
        """id of a structure -> (the structure, kept so no other object takes its id; the sums of `acc` each
        of its commands goes to)."""

    def add(self, structure: object, commands: Sequence[Command], start: Sequence[float], end: Sequence[float]) -> None:
        """Add one program's commands (of `structure`, None: none shared) with their start and end cycles."""
        known = self.targets.get(id(structure)) if structure is not None else None
        if known is None:
            add_line_costs(self.acc, commands, start, end)
            if structure is not None:
                if len(self.targets) >= STRUCTURES_KEPT:
                    self.targets.clear()
                acc = self.acc
                self.targets[id(structure)] = (structure, [acc[c.loc] for c in commands])
            return
        for a, c, s, e in zip(known[1], commands, start, end, strict=False):
            _add_command(a, c, s, e)


_ENGINE_CODE = {id(e): k for k, e in enumerate(Engine)}
"""Engine -> a small int, by identity (hashing an Enum member runs Python code)."""
_ENGINES = tuple(Engine)
_LOC, _ENGINE = attrgetter("loc"), attrgetter("engine")
_GLOBAL_READ, _GLOBAL_WRITE, _LS = (
    attrgetter("global_read_bytes"),
    attrgetter("global_write_bytes"),
    attrgetter("ls_bytes"),
)


def line_sums(programs: Sequence[ProgramTrace], cycles: CommandCycles) -> dict[str, list]:
    """`add_line_costs` of every program in order (the same sums, added in the same order, so the same
    values), with the per-command arithmetic in numpy: the accumulator `lines_of` takes.

    Programs sharing a `ProgramTrace.structure` issue their commands from the same ops, so they share the
    loc and engine of every command; those are read once per structure."""
    cmds: list[Command] = list(chain.from_iterable(p.commands for p in programs))
    acc: dict[str, list] = {}
    if not cmds:
        return acc
    index: dict[str, int] = {}
    """Loc -> its code, in first-seen order (the order of `acc`)."""
    by_structure: dict[int, np.ndarray] = {}
    loc_parts: list[np.ndarray] = []
    engine_codes: list[dict[int, None]] = []
    """Per loc code: the codes of its engines in first-seen order."""
    for prog in programs:
        codes = by_structure.get(id(prog.structure)) if prog.structure is not None else None
        if codes is None:
            # every loc of this program new to `index` appears first here, in this order; so does every
            # (loc, engine) pair (a later program of its structure has the same pairs)
            loc_codes = [index.setdefault(loc, len(index)) for loc in map(_LOC, prog.commands)]
            engine_codes.extend({} for _ in range(len(index) - len(engine_codes)))
            for k, e in zip(loc_codes, map(_ENGINE, prog.commands), strict=True):
                engine_codes[k][_ENGINE_CODE[id(e)]] = None
            codes = np.array(loc_codes, dtype=np.int64)
            if prog.structure is not None:
                by_structure[id(prog.structure)] = codes
        loc_parts.append(codes)
    loc = np.concatenate(loc_parts)
    n, n_locs = len(cmds), len(index)
    # bincount adds each loc's values one by one in command order, as the loop it replaces
    durations = (np.frombuffer(cycles.end) - np.frombuffer(cycles.start))[cycles.program_order()]
    cycles_of = np.bincount(loc, weights=durations, minlength=n_locs)
    read = np.fromiter(map(_GLOBAL_READ, cmds), np.int64, n)
    written = np.fromiter(map(_GLOBAL_WRITE, cmds), np.int64, n)
    global_bytes = np.bincount(loc, weights=read + written, minlength=n_locs)
    ls_bytes = np.bincount(loc, weights=np.fromiter(map(_LS, cmds), np.int64, n), minlength=n_locs)
    counts = np.bincount(loc, minlength=n_locs)
    engines = [dict.fromkeys(_ENGINES[code] for code in codes) for codes in engine_codes]
    for name, k in index.items():
        acc[name] = [int(counts[k]), float(cycles_of[k]), float(global_bytes[k]), float(ls_bytes[k]), engines[k]]
    return acc


def lines_of(acc: dict[str, list]) -> list[LineCost]:
    """The `LineCost` of each source line from per-loc sums (see `add_line_costs`), most command cycles first."""
    by_line: dict[str, list] = {}
    for loc, (n, cycles, gbytes, lbytes, engines) in acc.items():
        b = by_line.setdefault(line_key(loc), [0, 0.0, 0.0, 0.0, {}])
        b[0] += n
        b[1] += cycles
        b[2] += gbytes
        b[3] += lbytes
        b[4].update(engines)
    lines = [
        LineCost(loc, n, cyc, gb, lb, tuple(e.value for e in eng)) for loc, (n, cyc, gb, lb, eng) in by_line.items()
    ]
    return sorted(lines, key=lambda x: (-x.cycles, x.loc))


class BusyUnion:
    """`busy_cycles` computed while a launch runs, as programs finish: the same segments summed in the same
    order, so the same values, keeping one float per busy segment instead of every command.

    A finished program's commands wait in a per-PE buffer until no command of a program still running on
    that PE can start before them (`flush`), then join the union in start order (ties by program, then
    command: `busy_cycles`'s stable order).
    """

    __slots__ = ("canonical", "engines", "open", "pending", "segments")

    def __init__(self, engines: tuple[Engine, ...]) -> None:
        self.engines = engines
        """Engine of each queue index, as `busy_cycles` takes them."""
        self.canonical = [engines.index(e) for e in engines]
        self.pending: dict[int, list[tuple[float, int, int, int, float]]] = {}
        """PE -> (start, program, command, canonical engine, end) of finished commands not yet in the union."""
        self.open: dict[tuple[int, int], list[float]] = {}
        """(pe, canonical engine) -> [start, reach] of the segment still open."""
        self.segments: dict[tuple[int, int], array] = {}
        """(pe, canonical engine) -> lengths of its closed segments."""

    def add(self, pe: int, program: int, engine: Sequence[int], start: Sequence[float], end: Sequence[float]) -> None:
        """Add a finished program's commands (queue index, start and end cycle of each) on PE `pe`."""
        canonical = self.canonical
        self.pending.setdefault(pe, []).extend(
            (s, program, i, canonical[e], t) for i, (e, s, t) in enumerate(zip(engine, start, end, strict=True))
        )

    def flush(self, pe: int, before: float | None = None) -> None:
        """Join the union with PE `pe`'s buffered commands that start before `before` (None: all); every
        command added later on `pe` must start at or after `before`."""
        buffered = self.pending.get(pe)
        if not buffered:
            return
        buffered.sort()
        k = len(buffered) if before is None else bisect.bisect_left(buffered, (before,))
        open_, segments = self.open, self.segments
        for s, _, _, e, t in buffered[:k]:
            seg = open_.get((pe, e))
            if seg is None:
                open_[pe, e] = [s, t]
                segments[pe, e] = array("d")
            elif s > seg[1]:
                segments[pe, e].append(seg[1] - seg[0])
                seg[0], seg[1] = s, t
            elif t > seg[1]:
                seg[1] = t
        del buffered[:k]

    def result(self) -> dict[tuple[int, Engine], float]:
        """(pe, engine) -> busy cycles, as `busy_cycles` returns them (flushes every PE first)."""
        for pe in list(self.pending):
            self.flush(pe)
        busy = {}
        for (pe, e), seg in self.open.items():
            lengths = np.append(np.asarray(self.segments[pe, e], dtype=np.float64), seg[1] - seg[0])
            busy[pe, self.engines[e]] = float(np.sum(lengths))
        return {key: busy[key] for key in sorted(busy, key=lambda k: (k[0], k[1].value))}


def pairwise_sum(values: list[float], lo: int, n: int) -> float:
    """The sum numpy's float64 `np.add.reduce` (so `np.sum`) gives of values[lo:lo + n], plus -0.0: its pairwise
    summation (numpy/_core/src/umath/loops_utils.h.src), which adds fewer than 8 values in order, up to 128
    in 8 running sums, and more as two halves (the first a multiple of 8 long); np.sum starts from 0.0."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += values[i]
        return res
    if n <= 128:
        r = values[lo : lo + 8]
        i = 8
        whole = n - n % 8
        while i < whole:
            for j in range(8):
                r[j] += values[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += values[lo + i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_sum(values, lo, half) + pairwise_sum(values, lo + half, n - half)


def busy_cycles(
    pe_of_program: Sequence[int], cycles: CommandCycles, engines: tuple[Engine, ...]
) -> dict[tuple[int, Engine], float]:
    """Union of command intervals per (PE, engine).

    `pe_of_program[k]`: the PE of program k; `cycles`: every command's cycles and queue index.
    `engines[k]` is the engine of queue index k; an engine may appear at several indices (the timing model's
    two DMA queues), whose commands are one engine's.
    """
    if not cycles.start:  # no program issued a command
        return {}
    finished = np.asarray(cycles.finished, dtype=np.int64)
    pes = np.asarray(pe_of_program, dtype=np.int64)[finished]
    counts = np.asarray(cycles.count, dtype=np.int64)[finished]
    canonical = np.asarray([engines.index(e) for e in engines], dtype=np.int64)
    key = np.repeat(pes * len(engines), counts) + canonical[cycles.engines()]
    start_all = np.frombuffer(cycles.start)
    order = np.lexsort((start_all, key))  # by (PE, engine), each group by start cycle
    end_all = np.frombuffer(cycles.end)
    groups, lengths = _segments(key[order].tolist(), start_all[order].tolist(), end_all[order].tolist())
    busy = {}
    for k, lo, hi in groups:
        total = 0.0 + pairwise_sum(lengths, lo, hi - lo)  # np.sum of the lengths, without a numpy call
        busy[k // len(engines), engines[k % len(engines)]] = total
    return {key: busy[key] for key in sorted(busy, key=lambda k: (k[0], k[1].value))}


def _segments(key: list[int], start: list[float], end: list[float]) -> tuple[list[tuple[int, int, int]], list[float]]:
    """Busy segments of commands sorted by (key, start): ([(key, first, last + 1) of each key's segments in
    `lengths`], lengths). A command starting after every earlier one of its key ended opens a segment; a
    segment lasts from its first command's start to the latest end of its commands."""
    groups: list[tuple[int, int, int]] = []
    lengths: list[float] = []
    current = key[0]
    lo = 0
    seg_start = start[0]
    reach = end[0]
    for j in range(1, len(key)):
        k = key[j]
        s = start[j]
        e = end[j]
        if k != current:
            lengths.append(reach - seg_start)
            groups.append((current, lo, len(lengths)))
            current, lo, seg_start, reach = k, len(lengths), s, e
        elif s > reach:
            lengths.append(reach - seg_start)
            seg_start, reach = s, e
        elif e > reach:
            reach = e
    lengths.append(reach - seg_start)
    groups.append((current, lo, len(lengths)))
    return groups, lengths
