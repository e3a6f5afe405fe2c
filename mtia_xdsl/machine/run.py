"""Run a buffer-level mtia program on the MTIA-2i machine model: results into torch tensors, plus cycles.

Each Triton program id runs functionally on numpy (`machine/interpret/`), recording the engine
commands it issues; `machine/timing.py` then schedules all programs on the PE grid and
`machine/report.py` summarises. Results are written into the caller's tensors only when every
program finished without error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.commands import ProgramTrace
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, PeState, ScalarCoreCounter, set_pe_state
from mtia_xdsl.machine.interpret.tt import LaunchState, set_launch_state
from mtia_xdsl.machine.reference import _sym_name, located_error_text, make_tt_interpreter, prepare_launch
from mtia_xdsl.machine.report import Report, build_report
from mtia_xdsl.machine.timing import Timeline, TimingError, simulate


@dataclass
class RunResult:
    """What one launch on the machine model produced besides the tensors it wrote."""

    report: Report
    timeline: Timeline
    traces: list[ProgramTrace]


def machine_config(module: ModuleOp, options: Any = None) -> MachineConfig:
    """Return the MachineConfig for a run: `options.machine_config`, else `options.machine`, else the
    module's `mtia.target`.

    Raises: InterpretationError if none names a chip (lower the module with the default pipeline, or run
    mtia-set-target).
    """
    config = getattr(options, "machine_config", None)
    if isinstance(config, MachineConfig):
        return config
    name = getattr(options, "machine", None)
    target = module.attributes.get("mtia.target")
    if name is None and isinstance(target, TargetAttr):
        name = target.chip.data
    if name is None:
        raise InterpretationError("no chip to run on: the module has no mtia.target; run mtia-set-target first")
    return MachineConfig.preset(name)


def run_kernel(
    module: ModuleOp,
    grid: tuple[int, ...],
    args: list[Any],
    options: Any = None,
    kernel_name: str | None = None,
) -> RunResult:
    """Run the buffer-level kernel of `module` for every program id of `grid` and time it.

    `args` are the non-constexpr kernel arguments in order: torch CPU tensors for pointers, Python
    numbers for scalars. Results are written into the tensors when the whole launch succeeded; on any
    error the tensors are left as they were.
    Raises: InterpretationError naming the kernel line and program id (out-of-bounds access, CB
    protocol misuse, deadlock, bad arguments).
    """
    launch = prepare_launch(module, grid, args, kernel_name)
    config = machine_config(module, options)
    counter = ScalarCoreCounter()
    interpreter = make_tt_interpreter(module, (counter,))
    interpreter.register_implementations(MtiaFunctions())
    traces: list[ProgramTrace] = []
    last_op = launch.kernel.regions[0].block.last_op
    for pid in launch.program_ids():
        state = PeState(pid, config)
        counter.state = state
        set_launch_state(interpreter, LaunchState(launch.memory, pid, launch.grid))
        set_pe_state(interpreter, state)
        try:
            interpreter.call_op(launch.kernel, launch.values)
            traces.append(state.trace(last_op))
        except InterpretationError as e:
            raise InterpretationError(f"{located_error_text(e, counter.op, pid)}; no tensor was written") from None
    mapping = getattr(options, "pe_mapping", "linear")
    try:
        timeline = simulate(traces, config, mapping, launch.grid)
    except TimingError as e:
        raise InterpretationError(f"{e}; no tensor was written") from None
    launch.memory.commit()
    return RunResult(build_report(timeline, _sym_name(launch.kernel)), timeline, traces)
