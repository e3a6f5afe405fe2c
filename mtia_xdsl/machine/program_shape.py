"""Programs in the timing model: their structure (shared by programs alike) and their scheduling state.

`program_shape` returns, per program, its engines, scalar-core issue costs, CB dependencies (the CP's
producer/consumer tracking) and the occupancy, latency, LS bytes and ideal work of its compute commands.
Programs of a launch with the same structure (most grids) share one `ProgramShape`; a program whose
commands must keep program order through global memory (`memory_hazards`) gets its own. `ProgramRun`
holds a program's scheduling state while it runs (per-command cycles, dependency counts, engine heads).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from operator import attrgetter, itemgetter
from typing import Final

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine import cost
from mtia_xdsl.machine.commands import RE_LINK_KIND, Command, Engine, ProgramTrace, Runs, command_kind
from mtia_xdsl.machine.config import MachineConfig, dtype_bytes
from mtia_xdsl.machine.memory import first_run, hazards_possible, memory_hazards
from mtia_xdsl.machine.timeline import WorkTotals

ENGINES = tuple(Engine)
"""Engines in index order: per-engine lists of the timing model are indexed by position here."""
ENGINE_INDEX = {e: k for k, e in enumerate(ENGINES)}
SCALAR: Final = 0
DMA: Final = 1
DPE: Final = 2
RE: Final = 4
"""Indices of engines in ENGINES, as literals so that the compiled model (machine/compiled.py) inlines them
(checked against ENGINE_INDEX below)."""
DMA_WRITE: Final = 7
"""Queue index of the DMA engine's store queue (`MachineConfig.dma_queues` 2); it maps to `Engine.DMA`."""
QUEUES: Final = 8
"""Per-queue lists of the timing model have this length: one queue per engine, plus DMA_WRITE."""
assert (SCALAR, DMA, DPE, RE) == tuple(ENGINE_INDEX[e] for e in (Engine.SCALAR, Engine.DMA, Engine.DPE, Engine.RE))
assert DMA_WRITE == len(ENGINES) and QUEUES == len(ENGINES) + 1
MEMORY_QUEUES = (DMA, SCALAR, DMA_WRITE)
"""Queues whose commands start in events (they touch chip-wide memory): not committed ahead."""


def is_memory_queue(e: int) -> bool:
    """`e in MEMORY_QUEUES`, as comparisons of literals (the compiled model's hot loops call it)."""
    return e == DMA or e == SCALAR or e == DMA_WRITE


WRITE_KINDS = frozenset(command_kind(op.name) for op in (mtia.DmaStoreOp, mtia.ScatterOp))
"""Kinds of the commands writing global memory (the write port carries their bytes)."""


def is_write(c: Command) -> bool:
    """Whether DMA command `c` moves its bytes through the PE's write port (LS -> global memory)."""
    return c.kind in WRITE_KINDS or c.global_write_bytes > c.global_read_bytes


_WAITS, _FILLS, _ENGINE = attrgetter("waits"), attrgetter("fills"), attrgetter("engine")
_SCALAR_INSTRS, _SCALAR_BLOCKING = attrgetter("scalar_instrs"), attrgetter("scalar_blocking")


class TimingError(ValueError):
    """A command trace the timing model cannot schedule (bad CB references, deadlock, LS overflow)."""


class ProgramShape:
    """What scheduling needs of a program that depends only on its command structure (shared by the
    programs of a launch with the same structure): engines, issue costs, dependencies and the occupancy,
    latency, LS bytes and ideal work of its compute commands."""

    __slots__ = (
        "access_hits", "access_misses", "blocking", "by_accesses", "compute_commands", "dependents", "deps_left",
        "dpe_fill", "engine", "keyed", "latency", "ls_bytes", "memory_commands", "no_cycles", "occupancy",
        "per_queue_zeros", "pick_compute", "queues", "re_barriers", "release_extra", "scalar_cost", "unissued",
        "work",
    )  # fmt: skip

    def __init__(
        self,
        prog: ProgramTrace,
        config: MachineConfig,
        hazards: list[list[int]] | None,
        known: FactsCache | None = None,
    ) -> None:
        cmds = prog.commands
        facts = (known if known is not None else FactsCache(config)).of(cmds)
        self.release_extra = [f.release_extra for f in facts]
        engine = self.engine = [f.engine for f in facts]
        """Per command: the queue it starts from (the engine's index; DMA_WRITE for a store when
        `dma_queues` is 2)."""
        self.scalar_cost = [f.scalar_cost for f in facts]
        self.blocking = [f.blocking for f in facts]
        self.queues: list[list[int]] = [[] for _ in range(QUEUES)]
        for i, e in enumerate(engine):
            self.queues[e].append(i)
        self.re_barriers = [k for k, i in enumerate(self.queues[RE]) if facts[i].re_barrier]
        """Positions in the RE queue of the re_reduce commands that wait for their group (machine/re_barrier.py)."""
        self.dependents, self.deps_left = _dependencies(facts, prog, hazards)
        self.occupancy: list[float] = [f.occupancy for f in facts]
        self.latency: list[float] = [f.latency for f in facts]
        self.dpe_fill: list[float] = [f.dpe_fill for f in facts]
        """DPE: pipeline fill cycles added when the DPE was idle before the command (else 0)."""
        work = WorkTotals()
        self.ls_bytes = 0
        """LS bytes of the compute commands (DMA and scalar-core commands count theirs when they start)."""
        self.memory_commands = [i for i, f in enumerate(facts) if f.memory]
        """Commands that may touch global memory in a program of this shape."""
        compute: list[int] = []
        for i, f in enumerate(facts):
            if f.compute:
                compute.append(i)
                add_work(work, f.work_kind, f.ideal, f.count, f.flops)
                self.ls_bytes += f.ls_bytes
        self.work = work
        """Ideal work of the program's compute commands."""
        self.pick_compute: Callable[[list[Command]], tuple[Command, ...]] = (
            itemgetter(*compute) if len(compute) > 1 else lambda cmds: tuple(cmds[i] for i in compute)
        )
        """A program's compute commands (they decide the costs above), as a tuple."""
        self.compute_commands = self.pick_compute(cmds)
        """The compute commands of the program the shape was built from (another program reuses the shape
        only if its own are equal)."""
        self.by_accesses: dict[tuple, ProgramShape] = {}
        """`accesses_up_to_shift` of a program of this shape -> the shape it gets (this one, or one of its own
        when its commands must keep program order through memory); at most `MAX_ACCESS_PATTERNS` kept."""
        self.access_hits = 0
        self.access_misses = 0
        """Programs whose access pattern was found in / missing from `by_accesses` (patterns are looked for
        only while they pay: a grid whose blocks do not all move together never hits)."""
        self.keyed: tuple = ()
        """The objects whose ids key this shape in `program_shape`'s cache, kept alive so no other object
        takes one of those ids while the cache holds the shape."""
        self.unissued = [-1.0] * len(cmds)
        self.no_cycles = [0.0] * len(cmds)
        self.per_queue_zeros = [0] * QUEUES
        """What a `ProgramRun` of this shape starts its per-command and per-queue lists from (copies of these)."""


def compute_cost(c: Command, e: int, cfg: MachineConfig, w: WorkTotals) -> tuple[float, float]:
    """Return (engine occupancy, extra latency until results are visible) of a compute command; add its
    ideal work to `w`. The costs are `machine/cost.py`'s (the ones CB sizing uses); occupancy is whole
    cycles, at least 1. DPE occupancy excludes the pipeline fill."""
    occupancy, latency, kind, ideal, count, flops = compute_terms(c, e, cfg)
    add_work(w, kind, ideal, count, flops)
    return occupancy, latency


_NO_WORK: Final = 0
_DPE_WORK: Final = 1
_SE_WORK: Final = 2
_VEC_WORK: Final = 3
_RE_WORK: Final = 4
_MLU_WORK: Final = 5
"""Which `WorkTotals` fields a compute command adds to (`compute_terms`, `add_work`)."""


def compute_terms(c: Command, e: int, cfg: MachineConfig) -> tuple[float, float, int, float, int, float]:
    """`compute_cost` of a compute command without adding its work: (occupancy, latency, which fields of
    `WorkTotals` its work goes to, ideal cycles, MACs or elements, DPE flops)."""
    engine = c.engine
    if e == DPE:
        ideal = cost.dpe_cycles(c.macs, c.dtype, c.dpe_passes, cfg)
        return max(1, math.ceil(ideal)), 0.0, _DPE_WORK, ideal, c.macs, 2.0 * c.macs * c.dpe_passes
    if engine is Engine.RE and c.kind == RE_LINK_KIND:
        occupancy, latency = re_link_cycles(c, cfg)
        return occupancy, latency, _NO_WORK, 0.0, 0, 0.0
    ideal = cost.compute_cycles(engine, c.elems, c.dtype, cfg)
    if engine is Engine.SE:
        kind = _SE_WORK
    elif engine is Engine.VEC:
        kind = _VEC_WORK
    elif engine is Engine.RE:
        kind = _RE_WORK
    else:
        kind = _MLU_WORK
    return max(1, math.ceil(ideal)), cost.latency_cycles(engine, cfg, c.lut, c.re_hops), kind, ideal, c.elems, 0.0


def add_work(w: WorkTotals, kind: int, ideal: float, count: int, flops: float) -> None:
    """Add a compute command's ideal work (`compute_terms`) to `w`."""
    if kind == _DPE_WORK:
        w.dpe_cycles += ideal
        w.dpe_macs += count
        w.dpe_flops += flops
    elif kind == _SE_WORK:
        w.se_cycles += ideal
        w.se_elems += count
    elif kind == _VEC_WORK:
        w.vec_cycles += ideal
        w.vec_elems += count
    elif kind == _RE_WORK:
        w.re_cycles += ideal
    elif kind == _MLU_WORK:
        w.mlu_cycles += ideal


class CommandSlots:
    """The CB slots a command reads and fills, as (cb, seq) pairs (what `build_dependencies` reads of it)."""

    __slots__ = ("fill_in_place", "fill_keys", "wait_keys")

    def __init__(self, c: Command) -> None:
        self.wait_keys: list[tuple[int, int]] = [(r.cb, r.seq) for r in c.waits]
        self.fill_keys: list[tuple[int, int]] = [(r.cb, r.seq) for r in c.fills]
        self.fill_in_place: list[bool] = [k in self.wait_keys for k in self.fill_keys]
        """Per fill: the command also waits on the slot (an in-place update)."""


class CommandFacts(CommandSlots):
    """What a program shape needs of one command, read once per command object of a launch (the programs of
    a batch share their command objects, and a compacted loop's iterations are shared by the programs that
    ran them: causal attention's eight shapes hold 238 distinct commands of 756)."""

    __slots__ = (
        "blocking", "command", "compute", "count", "dpe_fill", "engine", "flops", "ideal", "latency", "ls_bytes",
        "memory", "occupancy", "re_barrier", "release_extra", "scalar_cost", "work_kind",
    )  # fmt: skip

    def __init__(self, c: Command, config: MachineConfig) -> None:
        super().__init__(c)
        self.command = c
        """The command (kept alive: `FactsCache` is keyed by its id)."""
        e = ENGINE_INDEX[c.engine]
        if e == DMA and config.dma_queues == 2 and is_write(c):
            e = DMA_WRITE
        self.engine = e
        """The queue the command starts from (the engine's index; DMA_WRITE for a store when `dma_queues` is 2)."""
        waits, fills = c.waits, c.fills
        self.release_extra = (len(waits) + len(fills)) * config.cp_check_cycles
        self.scalar_cost = c.scalar_instrs * config.scalar_cycles_per_instr + (
            config.scalar_issue_cycles if e != SCALAR else 0
        )
        self.blocking = c.scalar_blocking or e == SCALAR
        self.re_barrier = e == RE and c.re_group_size > 0
        self.compute = not is_memory_queue(e)
        self.memory = not self.compute or c.global_read_bytes > 0 or c.global_write_bytes > 0
        """The command may touch global memory."""
        self.occupancy = 0.0
        self.latency = 0.0
        self.dpe_fill = 0.0
        self.ls_bytes = 0
        self.work_kind = _NO_WORK
        self.ideal = 0.0
        self.count = 0
        self.flops = 0.0
        if self.compute:
            terms = compute_terms(c, e, config)
            self.occupancy, self.latency, self.work_kind, self.ideal, self.count, self.flops = terms
            if e == DPE:
                self.dpe_fill = float(config.dpe_fill_cycles)
            self.ls_bytes = c.ls_bytes


FACTS_CACHE_LIMIT = 1 << 16
"""`CommandFacts` a `FactsCache` holds at most (it starts afresh past this: a totals-only run releases traces
as their programs finish, and the cache must not keep a large launch's commands alive)."""


class FactsCache:
    """`CommandFacts` of the commands seen, by the command's id (each entry keeps its command alive, so no other
    object takes the id while the entry is there)."""

    __slots__ = ("config", "facts")

    def __init__(self, config: MachineConfig) -> None:
        self.config = config
        self.facts: dict[int, CommandFacts] = {}

    def of(self, cmds: list[Command]) -> list[CommandFacts]:
        """The facts of `cmds`, in order."""
        known = self.facts
        if len(known) + len(cmds) > FACTS_CACHE_LIMIT:
            known.clear()
        config = self.config
        out: list[CommandFacts] = []
        for c in cmds:
            f = known.get(id(c))
            if f is None:
                f = known[id(c)] = CommandFacts(c, config)
            out.append(f)
        return out


def program_shape(
    prog: ProgramTrace, config: MachineConfig, cache: dict[tuple, ProgramShape], facts: FactsCache | None = None
) -> ProgramShape:
    """Return the program's `ProgramShape`, from `cache` when a program of the same structure had one; a new
    shape reads its commands' facts from `facts` (a `FactsCache` of `config`) when given.

    The key holds the identities of the CB slot tuples, which the functional run shares between the
    programs of a batch, and the shape is reused only if the compute commands are equal too (the same
    objects, in a batch). Equal identities imply equal values; a program whose objects are not shared only
    misses the cache. The cached shape keeps the keyed objects (`ProgramShape.keyed`): a totals-only run
    releases traces as their programs finish, and without them a later program's new tuple could take a
    freed one's id and get the released program's shape. Programs sharing a `ProgramTrace.structure`
    object are keyed by it alone (the key holds the object).
    """
    cmds = prog.commands
    keyed: tuple = ()
    if prog.structure is not None:
        key: tuple = (prog.structure,)
    else:
        keyed = waits, fills = tuple(map(_WAITS, cmds)), tuple(map(_FILLS, cmds))
        key = (
            tuple(map(id, waits)),
            tuple(map(id, fills)),
            tuple(map(id, map(_ENGINE, cmds))),  # Engine members are singletons
            tuple(map(_SCALAR_INSTRS, cmds)),
            tuple(map(_SCALAR_BLOCKING, cmds)),
            tuple(prog.cb_depth.items()),
        )
    shape = cache.get(key)
    if shape is None or shape.pick_compute(cmds) != shape.compute_commands:  # identical objects compare fast
        shape = cache[key] = ProgramShape(prog, config, None, facts)
        shape.keyed = keyed
    if not hazards_possible(cmds, shape.memory_commands):
        return shape
    accesses = None
    if shape.access_misses < MISSES_BEFORE_GIVING_UP or shape.access_hits > shape.access_misses:
        accesses = accesses_up_to_shift(cmds, shape.memory_commands)
        if accesses is not None and (known := shape.by_accesses.get(accesses)) is not None:
            shape.access_hits += 1
            return known
        shape.access_misses += 1
    hazards = memory_hazards(cmds, shape.memory_commands)
    result = ProgramShape(prog, config, hazards, facts) if any(hazards) else shape  # address-dependent: not shared
    if accesses is not None and len(shape.by_accesses) < MAX_ACCESS_PATTERNS:
        shape.by_accesses[accesses] = result
    return result


MAX_ACCESS_PATTERNS = 256
"""Access patterns (`accesses_up_to_shift`) remembered per program shape."""
MISSES_BEFORE_GIVING_UP = 16
"""A shape stops looking for its programs' access patterns after this many misses, unless it hits more often."""


def accesses_up_to_shift(cmds: list[Command], indices: list[int]) -> tuple | None:
    """What `memory_hazards` reads of the commands `indices`, every address taken relative to the first one's:
    programs with equal keys have equal hazards, since two accesses that overlap still do, and two that do
    not still do not, when both move by the same amount (the programs of a grid moving the same blocks).

    Each command gives (its `RunBlock`, or the byte count of its one run; its offset; whether it reads;
    whether it writes). None if a command's runs are neither one run nor a `Runs`.
    """
    key: list[tuple[object, int, bool, bool]] = []
    base = 0
    for k, i in enumerate(indices):
        c = cmds[i]
        ranges = c.global_ranges
        what: object
        at: int
        if type(ranges) is Runs:
            what, at = ranges.block, ranges.shift
        elif len(ranges) == 1:
            first = first_run(ranges)
            what, at = first[1], first[0]
        else:
            return None
        if k == 0:
            base = at
        key.append((what, at - base, c.global_read_bytes > 0, c.global_write_bytes > 0))
    return tuple(key)


class ProgramRun:
    """Scheduling state of one program on its PE (the timing model's event loop reads and updates it)."""

    __slots__ = (
        "blocking", "cmds", "commit_state", "dep_ready", "dependents", "deps_left", "done_queued", "dpe_fill",
        "end_max", "end_t", "ended", "engine", "first", "head", "index", "issue_t", "issued", "latency", "n",
        "occupancy", "prog", "queues", "re_barriers", "release_extra", "scalar_cost", "scalar_end", "start_cycle",
        "start_t", "started",
    )  # fmt: skip

    def __init__(self, index: int, first: int, prog: ProgramTrace, shape: ProgramShape) -> None:
        self.index = index
        self.first = first
        """Index of the program's first command in the concatenation of all programs' commands."""
        self.prog = prog
        self.cmds = prog.commands
        self.n = len(self.cmds)
        self.issue_t = shape.unissued.copy()  # a copy of a shape's list: no temporary list as with [-1.0] * n
        self.start_t = shape.no_cycles.copy()
        self.end_t = shape.no_cycles.copy()
        self.dep_ready = shape.no_cycles.copy()
        self.release_extra = shape.release_extra
        self.engine = shape.engine
        self.scalar_cost = shape.scalar_cost
        self.blocking = shape.blocking
        self.queues = shape.queues
        self.dependents = shape.dependents
        self.deps_left = shape.deps_left.copy()
        self.occupancy = shape.occupancy
        self.latency = shape.latency
        self.dpe_fill = shape.dpe_fill
        self.re_barriers = shape.re_barriers
        self.head = shape.per_queue_zeros.copy()
        """Per engine: commands of its queue committed (start cycle known)."""
        self.started = shape.per_queue_zeros.copy()
        """Per engine: committed commands known to have started by the scalar core's last issue check."""
        self.issued = shape.per_queue_zeros.copy()
        self.ended = 0
        self.end_max = 0.0
        self.scalar_end: float | None = None
        self.start_cycle = 0.0
        self.done_queued = False
        """The program-done event is queued (it must be queued once: the next program starts on it)."""
        self.commit_state = (
            self.issue_t, self.deps_left, self.dep_ready, self.release_extra, self.occupancy, self.latency,
            self.dpe_fill, self.head, self.queues, self.start_t, self.end_t, self.dependents, self.engine, first,
        )  # fmt: skip
        """What `timing._Simulator._drain` reads, in one tuple (one attribute load instead of fourteen)."""


def build_dependencies(prog: ProgramTrace, hazards: list[list[int]] | None) -> tuple[list[list[int]], list[int]]:
    """Return (dependents of each command in increasing order, number of dependencies of each command).

    A command reading a slot depends on the slot's writer before it; one filling a slot depends on the
    previous occupant's writers and readers (seq - depth). A command that waits on and fills the same slot
    updates it in place (an `inplace` accumulator): it depends on the slot's earlier writers and readers,
    and later readers of the slot depend on it.

    Raises: TimingError naming the command's source line for a slot nothing fills, filled twice, or of a CB
    without depth.
    """
    return _dependencies([CommandSlots(c) for c in prog.commands], prog, hazards)


def _dependencies(
    slots: Sequence[CommandSlots], prog: ProgramTrace, hazards: list[list[int]] | None
) -> tuple[list[list[int]], list[int]]:
    """`build_dependencies` of `prog`, whose commands' slots are `slots`."""
    cmds = prog.commands
    depth = prog.cb_depth
    writers: dict[tuple[int, int], list[int]] = {}
    """Per slot: its filler, then the commands updating it in place, in program order."""
    readers: dict[tuple[int, int], list[int]] = {}
    for i, f in enumerate(slots):
        for key, in_place in zip(f.fill_keys, f.fill_in_place):
            if key[0] not in depth:
                c = cmds[i]
                raise TimingError(f"{c.loc}: {c.kind} fills circular buffer {key[0]}, which has no depth")
            if in_place:
                if key not in writers:
                    c = cmds[i]
                    raise TimingError(f"{c.loc}: {c.kind} updates slot {key[1]} of cb {key[0]}, which nothing filled")
                writers[key].append(i)
            elif key in writers:
                c = cmds[i]
                raise TimingError(f"{c.loc}: {c.kind} fills slot {key[1]} of cb {key[0]} a second time")
            else:
                writers[key] = [i]
        for key in f.wait_keys:
            rs = readers.get(key)
            if rs is None:
                readers[key] = [i]
            else:
                rs.append(i)
    dependents: list[list[int]] = [[] for _ in slots]
    deps_left = [0] * len(slots)
    for i, f in enumerate(slots):
        deps: list[int] = []  # distinct; few, so a list beats a set
        if hazards:
            for j in hazards[i]:
                _add_new(deps, j)
        for key in f.wait_keys:
            ws = writers.get(key)
            if ws is None:
                c = cmds[i]
                raise TimingError(f"{c.loc}: {c.kind} reads slot {key[1]} of cb {key[0]}, which nothing fills")
            _add_new(deps, ws[0] if len(ws) == 1 else _last_before(ws, i))
        for key, in_place in zip(f.fill_keys, f.fill_in_place):
            if in_place:  # after every earlier reader of the slot (its writers are readers too)
                for r in readers[key]:
                    if r < i:
                        _add_new(deps, r)
                continue
            prev_seq = key[1] - depth[key[0]]
            if prev_seq < 0:
                continue
            prev = (key[0], prev_seq)
            for before in (writers.get(prev), readers.get(prev)):
                if before is not None:
                    for j in before:
                        _add_new(deps, j)
        if i in deps:
            deps.remove(i)
        deps_left[i] = len(deps)
        for j in deps:
            dependents[j].append(i)
    for d in dependents:
        d.sort()
    return dependents, deps_left


def _add_new(xs: list[int], x: int) -> None:
    """Append `x` to `xs` unless it is there."""
    if x not in xs:
        xs.append(x)


def _last_before(writers: list[int], i: int) -> int:
    """The last of a slot's `writers` (increasing command indices) before command `i`, else the first."""
    k = bisect.bisect_left(writers, i)
    return writers[k - 1] if k else writers[0]


def re_link_cycles(c: Command, config: MachineConfig) -> tuple[float, float]:
    """(link occupancy, hop latency) of an `re_link` command: `elems` of `dtype` sent `re_hops` PEs away.

    Units: cycles. Occupancy is bytes / `re_link_bytes_per_cycle` (at least 1); latency is
    `re_hops` x `re_hop_cycles`.
    """
    nbytes = c.elems * dtype_bytes(c.dtype)
    return max(1, math.ceil(nbytes / config.re_link_bytes_per_cycle)), c.re_hops * config.re_hop_cycles
