"""Run a buffer-level mtia program on the MTIA-2i machine model: results into torch tensors, plus cycles.

Each Triton program id runs functionally on numpy (`machine/interpret/`), recording the engine
commands it issues; `machine/timing.py` then schedules all programs on the PE grid and
`machine/report.py` summarises. Results are written into the caller's tensors only when every
program finished without error.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.cf import CfFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.dialects.mtia import TargetAttr
from mtia_xdsl.machine.commands import ProgramTrace
from mtia_xdsl.machine.config import MachineConfig
from mtia_xdsl.machine.interpret.arith import ArithFunctions
from mtia_xdsl.machine.interpret.math import MathFunctions
from mtia_xdsl.machine.interpret.mtia import MtiaFunctions, PeState, ScalarCoreCounter, set_pe_state
from mtia_xdsl.machine.interpret.scf import ScfFunctions
from mtia_xdsl.machine.interpret.tt import LaunchState, TtFunctions, set_launch_state
from mtia_xdsl.machine.interpret.values import GlobalMemory
from mtia_xdsl.machine.reference import _arg_name, _grid3, _sym_name, _to_value, find_kernel
from mtia_xdsl.machine.report import Report, build_report
from mtia_xdsl.machine.timing import Timeline, simulate


@dataclass
class RunResult:
    """What one launch on the machine model produced besides the tensors it wrote."""

    report: Report
    timeline: Timeline
    traces: list[ProgramTrace]


def machine_config(module: ModuleOp, options: Any = None) -> MachineConfig:
    """Return the MachineConfig for a run: `options.machine_config`, else `options.machine`, else the
    module's `mtia.target`, else MTIA-2i."""
    config = getattr(options, "machine_config", None)
    if isinstance(config, MachineConfig):
        return config
    name = getattr(options, "machine", None)
    if name is None:
        target = module.attributes.get("mtia.target")
        name = target.chip.data if isinstance(target, TargetAttr) else "mtia2i"
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
    kernel = find_kernel(module, kernel_name)
    param_types = list(kernel.function_type.inputs.data)  # type: ignore[attr-defined]
    names = [_arg_name(kernel, i) for i in range(len(param_types))]
    if len(args) != len(param_types):
        raise InterpretationError(
            f"kernel '{_sym_name(kernel)}' takes {len(param_types)} non-constexpr arguments "
            f"({', '.join(names)}) but {len(args)} were given"
        )
    grid3 = _grid3(grid)
    memory = GlobalMemory.from_tensors(args, names)
    values = tuple(_to_value(a, t, n, kernel) for a, t, n in zip(args, param_types, names, strict=True))
    counter = ScalarCoreCounter()
    interpreter = Interpreter(module, listeners=(counter,))
    for functions in (TtFunctions(), ArithFunctions(), MathFunctions(), ScfFunctions(), CfFunctions(),
                      FuncFunctions(), MtiaFunctions()):  # fmt: skip
        interpreter.register_implementations(functions)
    traces: list[ProgramTrace] = []
    last_op = kernel.regions[0].block.last_op
    for z, y, x in itertools.product(*(range(n) for n in reversed(grid3))):
        state = PeState((x, y, z))
        counter.state = state
        set_launch_state(interpreter, LaunchState(memory, (x, y, z), grid3))
        set_pe_state(interpreter, state)
        try:
            interpreter.call_op(kernel, values)
            traces.append(state.trace(last_op))
        except InterpretationError as e:
            first_line = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise InterpretationError(f"{first_line} (program id {(x, y, z)}); no tensor was written") from None
    config = machine_config(module, options)
    mapping = getattr(options, "pe_mapping", "linear")
    timeline = simulate(traces, config, mapping, grid3)
    memory.commit()
    return RunResult(build_report(timeline, _sym_name(kernel)), timeline, traces)
