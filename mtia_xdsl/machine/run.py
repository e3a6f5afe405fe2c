"""Run a buffer-level mtia program on the MTIA-2i machine model: results into torch tensors, plus cycles.

The Triton programs of a grid run functionally on numpy (`machine/interpret/`) in batches: one pass of
the interpreter runs many program ids at once, every value carrying a leading batch dimension (see
`machine/interpret/values.py`), and records the engine commands each program issues. `machine/timing.py`
then schedules all programs on the PE grid and `machine/report.py` summarises. Results are written into
the caller's tensors only when every program finished without error.

Batches are exact, not an approximation of the per-program run:
- Divergence (a loop bound or branch condition that differs within a batch): the batch's writes to the
  working global memory are undone (undo log) and the batch is rerun split into groups of programs that
  agree on that value, each from the start (recursively; a group of one is the plain per-program run).
- Errors (out-of-bounds access, CB protocol, failed assertion): the batch is undone and rerun in halves,
  first half first, down to single programs, so the error reported is the per-program run's: the first
  failing program in launch order, with its kernel line and program id.
- Atomics apply program by program in batch order (lanes in row-major order of (program, lane)), and
  kernels that print run one program at a time.
- A kernel that reads its PE (`mtia.pe_id`) runs round by round (the k-th program of every PE, in
  increasing k), never two programs of a PE in one batch: a PE runs its programs one after the other, so
  each sees its predecessors' stores (per-PE state in global memory needs no atomics).
"""

from __future__ import annotations

import bisect
import os
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects import mtia
from mtia_xdsl.machine.commands import ProgramTrace
from mtia_xdsl.machine.config import TIMELINES, MachineConfig
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, PeState, ScalarCoreCounter, set_pe_state
from mtia_xdsl.machine.interpret.mtia_atomics import MtiaAtomicFunctions
from mtia_xdsl.machine.interpret.mtia_indexed_dma import MtiaIndexedDmaFunctions
from mtia_xdsl.machine.interpret.mtia_renet import CollectiveWait
from mtia_xdsl.machine.interpret.tt import LaunchState, set_launch_state
from mtia_xdsl.machine.interpret.values import Divergence
from mtia_xdsl.machine.placement import (  # noqa: F401  (re-exported: the run's helpers live with placement)
    Placement,
    by_round,
    has_collective,
    machine_config,
    reads_pe_id,
    round_starts,
    run_mapping,
    run_placement,
    run_subgrid,
)
from mtia_xdsl.machine.reference import (
    Launch,
    find_kernel,
    located_error_text,
    make_tt_interpreter,
    prepare_launch,
    sym_name,
)
from mtia_xdsl.machine.report import Report, build_report
from mtia_xdsl.machine.timing import Timeline, TimingError, TraceSource, simulate
from mtia_xdsl.utils.heap import (
    collections_paused,
    keep_freed_arrays_for_reuse,
    old_objects_frozen,
    survivors_promoted,
)

BATCH_ELEMS = 1 << 18
"""Largest number of elements of one value of a batch (batch size x the kernel's largest tensor)."""

PROGRESS_DELAY_S = 3.0
"""A launch shows a progress bar (stderr) only after running this long."""


@dataclass
class RunResult:
    """What one launch on the machine model produced besides the tensors it wrote."""

    report: Report
    timeline: Timeline
    traces: list[ProgramTrace]


def run_kernel(
    module: ModuleOp,
    grid: tuple[int, ...],
    args: list[Any],
    options: Any = None,
    kernel_name: str | None = None,
    max_batch: int | None = None,
    timeline: str | None = None,
) -> RunResult:
    """Run the buffer-level kernel of `module` for every program id of `grid` and time it.

    `args` are the non-constexpr kernel arguments in order: torch CPU tensors for pointers, Python
    numbers for scalars. Results are written into the tensors when the whole launch succeeded; on any
    error the tensors are left as they were. `max_batch` caps the programs run in one batch (1: one at a
    time; default: as many as fit `BATCH_ELEMS`). `timeline` (default: the option `timeline` of `options`,
    else "full") is one of `machine.config.TIMELINES`: "totals" keeps no command (the result's `traces`
    are empty, its timeline `totals_only`; same cycles and report; per-line cycles summed as programs end,
    so they may differ from "full" in the last bits) and, for a launch run in launch order, runs the
    programs' functional batches as the timing model reaches them, so memory follows the programs in
    flight; an error of a later program may then be reported after a timing error of an earlier one.
    Raises: InterpretationError naming the kernel line and program id (out-of-bounds access, CB
    protocol misuse, deadlock, bad arguments); ValueError for an unknown `timeline`.
    """
    keep_freed_arrays_for_reuse()  # a batch's large arrays: reused heap memory, not fresh pages per op
    # no collection walks the launch's objects or older ones, during the launch or right after it
    with old_objects_frozen(), collections_paused(), survivors_promoted():
        return _run_kernel(module, grid, args, options, kernel_name, max_batch, timeline)


def _run_kernel(
    module: ModuleOp,
    grid: tuple[int, ...],
    args: list[Any],
    options: Any,
    kernel_name: str | None,
    max_batch: int | None,
    timeline: str | None,
) -> RunResult:
    keep = _keeps_commands(options, timeline)
    facts = module_fact(module, ("kernel", kernel_name), lambda: _KernelFacts.of(module, kernel_name))
    launch = prepare_launch(module, grid, args, kernel_name, facts.kernel, facts.adopt_live_tensors)
    config = machine_config(module, options)
    n_programs = launch.grid[0] * launch.grid[1] * launch.grid[2]
    with _ProgressBar("programs", n_programs) as bar:
        placement = run_placement(launch.kernel, launch.grid, config, options)
        limit = _batch_limit(facts, max_batch)
        runner = _BatchRunner(module, launch, config, limit, bar.update, placement, facts)
        try:
            if not keep and runner.in_launch_order:
                run = _time(_StreamedTraces(runner), config, placement, launch.grid, None, keep_commands=False)
                traces: list[ProgramTrace] = []
            else:
                traces = runner.run_all()
        finally:
            runner.close()
    if keep or not runner.in_launch_order:
        with _ProgressBar("commands", sum(len(t.commands) for t in traces)) as bar:
            run = _time(traces, config, placement, launch.grid, bar.update, keep_commands=keep)
        if not keep:
            traces = []
    launch.memory.commit()
    return RunResult(build_report(run, sym_name(launch.kernel)), run, traces)


def _keeps_commands(options: Any, timeline: str | None) -> bool:
    mode = timeline if timeline is not None else getattr(options, "timeline", None) or "full"
    if mode not in TIMELINES:
        raise ValueError(f"unknown timeline {mode!r}; expected one of {', '.join(TIMELINES)}")
    return mode == "full"


def _time(
    traces: list[ProgramTrace] | TraceSource,
    config: MachineConfig,
    placement: Placement,
    grid: tuple[int, int, int],
    progress: Callable[[int], None] | None,
    keep_commands: bool,
) -> Timeline:
    """`simulate` the launch; a TimingError becomes the launch's InterpretationError."""
    try:
        return simulate(
            traces,
            config,
            placement.mapping,
            grid,
            subgrid=placement.subgrid,
            progress=progress,
            keep_commands=keep_commands,
        )
    except TimingError as e:
        raise InterpretationError(f"{e}; no tensor was written") from None


class _StreamedTraces(TraceSource):
    """The traces of a launch run in launch order, each produced by the runner's next batches when the timing
    model first asks for it and forgotten when released (totals-only timelines)."""

    def __init__(self, runner: _BatchRunner) -> None:
        super().__init__(runner.traces, runner.pids)
        self.runner = runner

    def get(self, i: int) -> ProgramTrace:
        runner = self.runner
        while self.traces[i] is None:
            if not runner.run_next():
                raise IndexError(f"the trace of program {i} was released")
        trace = self.traces[i]
        assert trace is not None
        return trace


class _BatchRunner:
    """Runs the programs of a launch in batches; see the module docstring."""

    def __init__(
        self,
        module: ModuleOp,
        launch: Launch,
        config: MachineConfig,
        max_batch: int,
        done: Callable[[int], Any],
        placement: Placement,
        facts: _KernelFacts,
    ) -> None:
        self.launch = launch
        self.placement = placement
        self.config = config
        self.max_batch = max_batch
        self.done = done
        self.module = module
        self.interpreter = _take_interpreter(module)
        self.counter: ScalarCoreCounter = self.interpreter.counter  # type: ignore[assignment]  # set there
        self.last_op = launch.kernel.regions[0].block.last_op
        self.pids = list(launch.program_ids())
        self.collective = facts.collective
        if self.collective:  # mtia.re_allreduce groups run in one batch: order by round, whole rounds per batch
            self.pids = by_round(self.pids, placement)
            n_pes = placement.subgrid.n_pes
            self.max_batch = max(n_pes, self.max_batch // n_pes * n_pes)
        self.round_starts: list[int] | None = None
        """Positions in `pids` where a round starts, for a kernel reading its PE (batches stay in one round)."""
        if facts.reads_pe_id and len(self.pids) > placement.subgrid.n_pes:
            self.pids = by_round(self.pids, placement)
            self.round_starts = round_starts(self.pids, placement)
        self.traces: list[ProgramTrace | None] = [None] * len(self.pids)
        self.collective_results: dict[tuple[int, int], Any] = {}
        self.collective_inputs: dict[tuple[int, int], Any] = {}
        """LaunchState.collective_results / collective_inputs shared by every batch of the launch."""
        self.waiting: list[tuple[np.ndarray, CollectiveWait]] = []
        """Batches that reached a cross-PE reduction before the rest of their group, to retry."""
        self.runs_cache: dict[tuple, tuple] = {}
        """PeState.runs_cache shared by every batch of the launch."""
        self.in_launch_order = not self.collective and self.round_starts is None
        """Programs run in launch order, batch after batch (so a batch's traces may be timed before the next runs)."""
        self.next_start = 0
        """Position in `pids` of the next batch's first program."""

    def close(self) -> None:
        """Give the interpreter back for the next launch of the module (`_take_interpreter`)."""
        interpreter, self.interpreter = self.interpreter, None  # type: ignore[assignment]
        if interpreter is not None:
            _give_back(self.module, interpreter)

    def run_all(self) -> list[ProgramTrace]:
        """Run every program; return the traces in launch order (x fastest)."""
        while self.run_next():
            pass
        memory = self.launch.memory
        memory.begin_undo()
        try:
            self._retry_waiting()
        finally:
            memory.end_undo()
        traces = [t for t in self.traces if t is not None]
        if self.collective or self.round_starts is not None:  # back to launch order
            gx, gy, _ = self.launch.grid
            traces.sort(key=lambda t: t.program_id[0] + gx * (t.program_id[1] + gy * t.program_id[2]))
        return traces

    def run_next(self) -> bool:
        """Run the next batch of programs; return False if every batch ran already.

        Writes to the working global memory are logged for undo only while a batch runs.
        """
        start = self.next_start
        if start >= len(self.pids):
            return False
        stop = min(start + self.max_batch, len(self.pids))
        if self.round_starts is not None:  # PE order: never past the end of the round
            stop = min(stop, self.round_starts[bisect.bisect_right(self.round_starts, start)])
        memory = self.launch.memory
        memory.begin_undo()
        try:
            self._run_group(np.arange(start, stop))
        finally:
            memory.end_undo()
        self.next_start = stop
        return True

    def _retry_waiting(self) -> None:
        """Rerun the batches waiting at a cross-PE reduction until none is left or none makes progress.

        Raises: InterpretationError (the first wait's message) when waiting batches can make no progress.
        """
        while self.waiting:
            waiting, self.waiting = self.waiting, []
            before = len(self.collective_inputs)
            for group, _ in waiting:
                self._run_group(group)
            if self.waiting and len(self.collective_inputs) == before:
                group, wait = self.waiting[0]
                text = located_error_text(wait, None, self.pids[int(group[0])])
                raise InterpretationError(f"{text}; no tensor was written")

    def _run_group(self, group: np.ndarray) -> None:
        """Run the programs `group` (indices into the launch, ascending), splitting as needed."""
        memory = self.launch.memory
        memory.undo_log = []
        try:
            traces = self._run_batch(group)
        except CollectiveWait as wait:
            memory.undo()
            self.waiting.append((group, wait))
            return
        except Divergence as d:
            memory.undo()
            _, first, which = np.unique(d.values, return_index=True, return_inverse=True)
            for k in np.argsort(first):
                self._run_group(group[which.reshape(-1) == k])
            return
        except Exception as e:
            if len(group) == 1:
                pid = self.pids[int(group[0])]
                internal = not isinstance(e, InterpretationError)
                if internal:  # a bug of the model, still located for the user; the cause stays chained
                    message = (
                        f"internal error of the machine model ({type(e).__name__}: {e}); please report this kernel"
                    )
                    text = located_error_text(InterpretationError(message), self.interpreter.last_op, pid)
                else:
                    text = located_error_text(e, self.interpreter.last_op, pid)
                raise InterpretationError(f"{text}; no tensor was written") from (e if internal else None)
            memory.undo()
            if not isinstance(e, InterpretationError):
                self.max_batch = 1  # an op without batch support: run one program at a time from now on
                for j in range(len(group)):
                    self._run_group(group[j : j + 1])
                return
            half = len(group) // 2
            self._run_group(group[:half])
            self._run_group(group[half:])
            return
        for k, trace in zip(group, traces, strict=True):
            self.traces[int(k)] = trace
        self.done(len(group))

    def _run_batch(self, group: np.ndarray) -> list[ProgramTrace]:
        """One pass of the interpreter over the programs `group`; return their traces."""
        pids = [self.pids[int(k)] for k in group]
        if len(pids) == 1:
            program_id: tuple[Any, Any, Any] = pids[0]
        else:
            ids = np.asarray(pids, dtype=np.int32)
            program_id = (ids[:, 0], ids[:, 1], ids[:, 2])
        state = PeState(pids, self.config, runs_cache=self.runs_cache)
        self.counter.state = state
        launch = LaunchState(
            self.launch.memory,
            program_id,
            self.launch.grid,
            self.placement,
            self.collective_results,
            self.collective_inputs,
        )
        set_launch_state(self.interpreter, launch)
        set_pe_state(self.interpreter, state)
        try:
            self.interpreter.call_op(self.launch.kernel, self.launch.values)
            return state.traces(self.last_op)
        finally:
            state.release()  # the batch's CBs refer to each other: freed now, not by a collection


_REUSED: weakref.WeakSet[ModuleOp] = weakref.WeakSet()
"""Modules whose launches reuse interpreters (`reuse_interpreters`)."""
_FACTS = "_mtia_module_facts"
"""Attribute of a module of `_REUSED` holding its `module_fact`s (on the module, as `_IDLE`)."""
_IDLE = "_mtia_idle_interpreter"
"""Attribute of a module of `_REUSED` holding its interpreter while no launch uses it (on the module, not in a
dict keyed by it: the interpreter refers to its module, so a dict entry would keep the module alive forever,
while this cycle is collected with the module)."""


def reuse_interpreters(module: ModuleOp) -> None:
    """Let the launches of `module` reuse one interpreter: its plans of the module's blocks and its per-op facts
    (engine command fields, DMA block types, loop facts), resolved by the first launch, serve the next ones.

    The caller promises never to edit `module` in place (the runtime's loaded kernels: mtia_xdsl/runtime/
    triton_backend/driver.py); otherwise each launch resolves them afresh.
    """
    _REUSED.add(module)


def module_fact(module: ModuleOp, key: Any, compute: Callable[[], Any]) -> Any:
    """`compute()`: a fact of `module`'s IR, remembered under `key` when the module's launches reuse interpreters
    (`reuse_interpreters`: the caller promised never to edit it), else computed afresh."""
    if module not in _REUSED:
        return compute()
    facts = module.__dict__.setdefault(_FACTS, {})
    if key not in facts:
        facts[key] = compute()
    return facts[key]


@dataclass(frozen=True)
class _KernelFacts:
    """What a launch reads of its kernel's IR, in one walk (`module_fact` keeps it for a reused module)."""

    kernel: Operation
    """The kernel (`find_kernel`)."""
    adopt_live_tensors: bool
    """It has a `tt.int_to_ptr` (see GlobalMemory.adopt_live_tensors)."""
    collective: bool
    """It has a cross-PE reduction (`has_collective`)."""
    reads_pe_id: bool
    """It reads its PE (`reads_pe_id`)."""
    prints: bool
    """It has a `tt.print`."""
    largest_elems: int
    """Elements of its largest tensor or tile result (1 if none)."""

    @staticmethod
    def of(module: ModuleOp, kernel_name: str | None) -> _KernelFacts:
        kernel = find_kernel(module, kernel_name)
        ops = list(kernel.walk())
        names = {op.name for op in ops}
        largest = 1
        for op in ops:
            for r in op.results:
                t = mtia.tile_type(r.type)
                if isinstance(t, TensorType):
                    largest = max(largest, int(np.prod(t.get_shape())))
        return _KernelFacts(
            kernel,
            "tt.int_to_ptr" in names,
            has_collective(kernel),
            reads_pe_id(kernel),
            "tt.print" in names,
            largest,
        )


def _take_interpreter(module: ModuleOp) -> Any:
    """An interpreter of buffer-level `module` with the machine's semantics and a `ScalarCoreCounter` as its
    `counter`: an idle one of an earlier launch (`reuse_interpreters`), else a new one."""
    idle = module.__dict__.pop(_IDLE, None)
    if idle is not None:
        return idle
    interpreter = make_tt_interpreter(module, counter=ScalarCoreCounter())
    interpreter.register_implementations(MtiaFunctions())
    interpreter.register_implementations(MtiaAtomicFunctions())
    interpreter.register_implementations(MtiaIndexedDmaFunctions())
    return interpreter


def _give_back(module: ModuleOp, interpreter: Any) -> None:
    """Keep `interpreter` for the next launch of `module` if the module's launches reuse interpreters."""
    if module not in _REUSED:
        return
    interpreter.counter.state = None
    interpreter.last_op = None
    interpreter._impl_data.clear()  # the launch's memory and PE state: not kept alive by an idle interpreter
    setattr(module, _IDLE, interpreter)  # one per module: launches run one after another


def _batch_limit(facts: _KernelFacts, max_batch: int | None) -> int:
    """Programs per batch: `max_batch` if given; 1 for kernels that print; else BATCH_ELEMS / largest tensor."""
    if max_batch is not None:
        return max(1, max_batch)
    if facts.prints:
        return 1
    return max(1, BATCH_ELEMS // facts.largest_elems)


class _ProgressBar:
    """A tqdm bar on stderr, shown after PROGRESS_DELAY_S when stderr is a terminal or MTIA_PROGRESS=1."""

    def __init__(self, unit: str, total: int) -> None:
        enabled = sys.stderr.isatty() or os.environ.get("MTIA_PROGRESS") == "1"
        self.bar: Any = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, unit=unit, delay=PROGRESS_DELAY_S, file=sys.stderr, leave=False, desc="machine model"
            )

    def update(self, n: int) -> None:
        """Advance the bar by `n`."""
        if self.bar is not None:
            self.bar.update(n)

    def __enter__(self) -> _ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
