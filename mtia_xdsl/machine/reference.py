"""Reference semantics of a tt-level kernel: run every program of a grid on the caller's torch tensors.

`run_tt` is the oracle every pass and the machine model are checked against: it interprets the tt IR
(`machine/interpret/tt.py` and friends) program by program, x fastest, on working copies of the
argument storages, and writes them back only when every program finished.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import builtin
from xdsl.interpreter import Interpreter, OpImplResult, PythonValues, ReturnedValues, Successor
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from mtia_xdsl.machine.interpret.arith import ArithFunctions
from mtia_xdsl.machine.interpret.cf import CfFunctions
from mtia_xdsl.machine.interpret.descriptor import DescriptorFunctions
from mtia_xdsl.machine.interpret.map_elementwise import MapElementwiseFunctions
from mtia_xdsl.machine.interpret.math import MathFunctions
from mtia_xdsl.machine.interpret.mtia_pe import MtiaPeFunctions
from mtia_xdsl.machine.interpret.mtia_renet import MtiaReNetFunctions
from mtia_xdsl.machine.interpret.mtia_slice import MtiaSliceFunctions
from mtia_xdsl.machine.interpret.scf import ScfFunctions
from mtia_xdsl.machine.interpret.tt import LaunchState, TtFunctions, set_launch_state
from mtia_xdsl.machine.interpret.values import GlobalMemory, as_value, location_str
from mtia_xdsl.machine.placement import launch_grid
from mtia_xdsl.utils.locations import argument_count_error


class OpCounter(Protocol):
    """Counts ops as a scalar core would, for `_Interpreter` (see `ScalarCoreCounter` in interpret/mtia.py)."""

    state: Any
    """None (count nothing), or an object with int attributes `engine_depth` (ops run inside an engine
    body while it is non-zero are not counted) and `scalar_instrs` (incremented per counted op)."""

    def counts(self, op: Operation) -> bool:
        """Return whether running `op` counts (decided once per op)."""
        ...


_Step = tuple[Operation, Any, Any, Callable[[list[Any]], tuple[Any, ...]], tuple[int, ...], bool]
"""(op, functions object, implementation, operand fetcher, result slots, counted) of one op of a block."""


class _Interpreter(Interpreter):
    """xDSL's interpreter with a lean inner loop (the machine model runs many ops per launch).

    Same semantics as `Interpreter.run_ssacfg_region`, but each block is resolved once into a plan: the
    implementation of each op, and integer slots for its operands and results in one flat value list
    (SSA values are unique, so no scopes are needed). An InterpreterFunctions class may offer
    `prepare_op(op)`: an implementation specialized to `op` (same signature, op facts read once), or None.
    Exceptions of op implementations pass through unchanged (xDSL attaches a printout of the whole module
    to each; callers report the first line).
    `last_op` is the innermost op running when an exception left the current call (None if none did), to
    locate errors raised without a kernel location.
    """

    def __init__(
        self,
        module: builtin.ModuleOp,
        listeners: tuple[Interpreter.Listener, ...] = (),
        counter: OpCounter | None = None,
    ) -> None:
        super().__init__(module, listeners=listeners)
        self.counter: OpCounter | None = counter
        self.last_op: Operation | None = None
        self._plans: dict[Block, tuple[tuple[int, ...], tuple[_Step, ...]]] = {}
        self._slots: dict[SSAValue, int] = {}
        self._env: list[Any] = []
        self._depth = 0

    def register_implementations(self, impls: Any, /, override: bool = False) -> None:
        """Register `impls` (see xDSL) and forget resolved plans."""
        super().register_implementations(impls, override=override)
        self._plans.clear()

    def _slot(self, value: SSAValue) -> int:
        slot = self._slots.get(value)
        if slot is None:
            slot = self._slots[value] = len(self._env)
            self._env.append(None)
        return slot

    def _plan(self, block: Block) -> tuple[tuple[int, ...], tuple[_Step, ...]]:
        table = self._impls._impl_dict  # pyright: ignore[reportPrivateUsage]
        counter = self.counter
        steps: list[_Step] = []
        for op in block.ops:
            entry = table.get(type(op))
            ft, fn = entry if entry is not None else (None, _missing_impl)
            prepare = getattr(ft, "prepare_op", None)
            if prepare is not None:
                fn = prepare(op) or fn
            ins = tuple(self._slot(v) for v in op.operands)
            steps.append(
                (
                    op,
                    ft,
                    fn,
                    _fetcher(ins),
                    tuple(self._slot(r) for r in op.results),
                    bool(counter is not None and counter.counts(op)),
                )
            )
        plan = (tuple(self._slot(a) for a in block.args), tuple(steps))
        self._plans[block] = plan
        return plan

    def run_ssacfg_region(self, region: Any, args: PythonValues, name: str = "unknown") -> PythonValues:
        results: PythonValues = ()
        block = region.blocks.first
        state = self.counter.state if self.counter is not None else None
        if state is not None and state.engine_depth:
            state = None
        if self._depth == 0:
            self.last_op = None
        self._depth += 1
        op: Operation | None = None
        try:
            while block is not None:
                plan = self._plans.get(block) or self._plan(block)
                env = self._env
                for slot, value in zip(plan[0], args, strict=False):
                    env[slot] = value
                block = None
                for op, ft, fn, fetch, outs, counted in plan[1]:
                    if counted and state is not None:
                        state.scalar_instrs += 1
                    if self.listeners:
                        values, terminator = self._run_listened(op, ft, fn, fetch(env))
                    else:
                        values, terminator = fn(ft, self, op, fetch(env))
                    if len(values) != len(outs):
                        raise InterpretationError(
                            f"{op.name} has {len(outs)} results but its implementation returned {len(values)}"
                        )
                    if outs:
                        for slot, value in zip(outs, values):
                            env[slot] = value
                    if terminator is not None:
                        if isinstance(terminator, ReturnedValues):
                            results = terminator.values
                        elif isinstance(terminator, Successor):
                            block, args = terminator
                        break
        except Exception:
            if self.last_op is None:
                self.last_op = op  # the innermost op that was running
            raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._env = [None] * len(self._env)  # drop the values of the finished call
        return results

    def _run_listened(self, op: Operation, ft: Any, fn: Any, inputs: PythonValues) -> OpImplResult:
        for listener in self.listeners:
            listener.will_interpret_op(op, inputs)
        result = fn(ft, self, op, inputs)
        for listener in self.listeners:
            listener.did_interpret_op(op, result[0])
        return result


def _missing_impl(ft: Any, interpreter: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
    raise InterpretationError(f"Could not find interpretation function for op {op.name}")


def _fetcher(slots: tuple[int, ...]) -> Callable[[list[Any]], tuple[Any, ...]]:
    """Return a function reading the values at `slots` of a value list, as a tuple."""
    if not slots:
        return lambda env: ()
    if len(slots) == 1:
        (i,) = slots
        return lambda env: (env[i],)
    return operator.itemgetter(*slots)


def make_tt_interpreter(
    module: builtin.ModuleOp, listeners: tuple[Interpreter.Listener, ...] = (), counter: OpCounter | None = None
) -> _Interpreter:
    """Return an interpreter for `module` with the tt (incl. tensor descriptors and map_elementwise), arith,
    math, scf, cf, func, PE-grid (mtia.pe_id, mtia.re_allreduce) and mtia.extract_slice semantics registered;
    `counter` counts scalar-core instructions."""
    interpreter = _Interpreter(module, listeners, counter)
    functions = (
        TtFunctions(),
        ArithFunctions(),
        MathFunctions(),
        ScfFunctions(),
        CfFunctions(),
        FuncFunctions(),
        DescriptorFunctions(),
        MapElementwiseFunctions(),
        MtiaPeFunctions(),
        MtiaSliceFunctions(),
        MtiaReNetFunctions(),
    )
    for f in functions:
        interpreter.register_implementations(f)
    return interpreter


def find_kernel(
    module: builtin.ModuleOp, kernel_name: str | None = None, how_to_choose: str = "pass kernel_name"
) -> Operation:
    """Return the tt.func named `kernel_name`, or the module's only public tt.func.

    `how_to_choose` ends the error for several candidates (a tool names its own option).
    Raises: InterpretationError if there is no such function, or several candidates and no name.
    """
    funcs = [op for op in module.walk() if op.name == "tt.func"]
    names = [sym_name(f) for f in funcs]
    if kernel_name is not None:
        for f, n in zip(funcs, names, strict=True):
            if n == kernel_name:
                return f
        raise InterpretationError(f"no tt.func named '{kernel_name}' in the module; it has {', '.join(names)}")
    public = [f for f in funcs if _visibility(f) != "private"]
    if len(public) != 1:
        raise InterpretationError(
            f"the module has {len(public)} public tt.func ops ({', '.join(sym_name(f) for f in public)}); "
            f"{how_to_choose}"
        )
    return public[0]


def run_tt(
    module: builtin.ModuleOp,
    grid: tuple[int, int, int],
    args: list[Any],
    kernel_name: str | None = None,
    options: Any = None,
) -> None:
    """Run a tt-level kernel for every program id of `grid`, then write results into the torch tensors.

    `args` are the kernel's non-constexpr arguments in order: torch CPU tensors for pointers (or None for
    a null pointer), Python numbers for scalars. On any error the caller's tensors are left untouched.
    `options` (as for `machine.run.run_kernel`: `machine`, `pe_mapping`, `pe_subgrid`) place the programs
    on PEs for kernels that ask for theirs (`mtia_xdsl.language.get_pe_id`).
    Raises: InterpretationError naming the kernel line (out-of-bounds access, bad arguments, ...).
    """
    launch = prepare_launch(module, grid, args, kernel_name)
    interpreter = make_tt_interpreter(module)
    placement = _reference_placement(module, launch, options)
    if any(op.name == "mtia.re_allreduce" for op in launch.kernel.walk()):
        _run_by_round(interpreter, launch, placement)
        launch.memory.commit()
        return
    for pid in launch.program_ids():
        set_launch_state(interpreter, LaunchState(launch.memory, pid, launch.grid, placement))
        try:
            interpreter.call_op(launch.kernel, launch.values)
        except InterpretationError as e:
            raise InterpretationError(located_error_text(e, interpreter.last_op, pid)) from None
    launch.memory.commit()


def _run_by_round(interpreter: _Interpreter, launch: Launch, placement: Any) -> None:
    """Run the programs of each round together (as a batch), so cross-PE reductions see their groups.

    A batch whose programs disagree on a branch or loop bound is undone and rerun split by that value.
    """
    import numpy as np

    from mtia_xdsl.machine.placement import by_round

    if isinstance(placement, InterpretationError):
        raise placement
    pids = by_round(list(launch.program_ids()), placement)
    n = placement.subgrid.n_pes
    shared = (placement, {}, {})  # placement, cross-PE reduction results and inputs (LaunchState)
    waiting: list[Any] = []
    launch.memory.begin_undo()
    try:
        for start in range(0, len(pids), n):
            _run_batch_splitting(interpreter, launch, shared, np.asarray(pids[start : start + n]), waiting)
        while waiting:  # batches that reached a reduction before the rest of their group
            retry, waiting[:] = list(waiting), []
            before = len(shared[2])
            for ids, _ in retry:
                _run_batch_splitting(interpreter, launch, shared, ids, waiting)
            if waiting and len(shared[2]) == before:
                ids, wait = waiting[0]
                raise InterpretationError(located_error_text(wait, None, tuple(map(int, ids[0]))))
    finally:
        launch.memory.end_undo()


def _run_batch_splitting(
    interpreter: _Interpreter, launch: Launch, shared: tuple[Any, Any, Any], ids: Any, waiting: list[Any]
) -> None:
    """Run the programs `ids` as one batch; on a divergence undo and rerun them split by the diverging value;
    a batch waiting at a cross-PE reduction is undone and appended to `waiting` (with its CollectiveWait).

    `shared` is (placement, cross-PE reduction results, inputs) of the launch (see LaunchState).
    """
    import numpy as np

    from mtia_xdsl.machine.interpret.mtia_renet import CollectiveWait
    from mtia_xdsl.machine.interpret.values import Divergence

    launch.memory.undo_log = []
    program_id = tuple(ids[:, a].astype(np.int32) for a in range(3)) if len(ids) > 1 else tuple(map(int, ids[0]))
    set_launch_state(interpreter, LaunchState(launch.memory, program_id, launch.grid, *shared))
    try:
        interpreter.call_op(launch.kernel, launch.values)
    except CollectiveWait as wait:
        launch.memory.undo()
        waiting.append((ids, wait))
    except Divergence as d:
        launch.memory.undo()
        _, first, which = np.unique(d.values, return_index=True, return_inverse=True)
        for k in np.argsort(first):
            _run_batch_splitting(interpreter, launch, shared, ids[which.reshape(-1) == k], waiting)
    except InterpretationError as e:
        raise InterpretationError(located_error_text(e, interpreter.last_op, tuple(map(int, ids[0])))) from None


def _reference_placement(module: builtin.ModuleOp, launch: Launch, options: Any) -> Any:
    """Return the launch's Placement, or the InterpretationError a PE query raises when no machine is named."""
    from mtia_xdsl.machine.placement import machine_config, run_placement

    try:
        config = machine_config(module, options)
    except InterpretationError as e:
        return InterpretationError(
            f"{e}; a kernel that asks for its PE (get_pe_id) runs on a machine: pass options with `machine`"
        )
    return run_placement(launch.kernel, launch.grid, config, options)


@dataclass(frozen=True)
class Launch:
    """A checked launch: the kernel, its 3-d grid, the working global memory and the argument values."""

    kernel: Operation
    grid: tuple[int, int, int]
    memory: GlobalMemory
    values: tuple[Any, ...]
    """Runtime values of the kernel parameters (pointers as int64 byte addresses)."""

    def program_ids(self) -> Iterator[tuple[int, int, int]]:
        """Yield every program id (x, y, z) of the grid, x fastest."""
        for z, y, x in itertools.product(*(range(n) for n in reversed(self.grid))):
            yield (x, y, z)


def prepare_launch(
    module: builtin.ModuleOp,
    grid: Sequence[int],
    args: list[Any],
    kernel_name: str | None = None,
    kernel: Operation | None = None,
    adopt_live_tensors: bool | None = None,
) -> Launch:
    """Find the kernel, check `args` against its parameters and build the working global memory.

    `kernel` (the result of `find_kernel(module, kernel_name)`) and `adopt_live_tensors` (whether it has a
    `tt.int_to_ptr`) skip walking the module when the caller knows them already.
    Raises: InterpretationError naming the kernel for a wrong argument count, type or range.
    """
    if kernel is None:
        kernel = find_kernel(module, kernel_name)
    param_types = list(kernel.function_type.inputs.data)  # type: ignore[attr-defined]
    names = [_arg_name(kernel, i) for i in range(len(param_types))]
    if len(args) != len(param_types):
        raise InterpretationError(
            argument_count_error(
                location_str(kernel.location), sym_name(kernel), names, len(args), kind="non-constexpr arguments"
            )
        )
    memory = GlobalMemory.from_tensors(args, names)
    if adopt_live_tensors is None:
        adopt_live_tensors = any(op.name == "tt.int_to_ptr" for op in kernel.walk())
    memory.adopt_live_tensors = adopt_live_tensors
    values = tuple(_to_value(a, t, n, kernel) for a, t, n in zip(args, param_types, names, strict=True))
    return Launch(kernel, _grid3(grid, location_str(kernel.location)), memory, values)


def located_error_text(e: Exception, op: Operation | None, pid: tuple[int, int, int]) -> str:
    """Return the first line of an interpretation error, located at `op` if it names no location."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if ": error: " not in text and op is not None:
        text = f"{location_str(op.location)}: error: {op.name}: {text}"
    return f"{text} (program id {pid})"


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def _grid3(grid: Sequence[int], where: str = "<unknown location>") -> tuple[int, int, int]:
    try:
        return launch_grid(tuple(grid))  # machine/placement.py: the one rule of a launch grid
    except ValueError as e:
        raise InterpretationError(f"{where}: error: {e}") from None


def sym_name(op: Operation) -> str:
    """Return the `sym_name` of a function op (a kernel), or "?" if it has none."""
    attr = op.properties.get("sym_name")
    return attr.data if isinstance(attr, builtin.StringAttr) else "?"


def _visibility(op: Operation) -> str:
    attr = op.properties.get("sym_visibility")
    return attr.data if isinstance(attr, builtin.StringAttr) else "public"


def _arg_name(kernel: Operation, i: int) -> str:
    hint = kernel.regions[0].blocks[0].args[i].name_hint
    return hint if hint else f"argument #{i}"


def _to_value(arg: Any, t: Attribute, name: str, kernel: Operation) -> Any:
    """Convert a launch argument to the runtime value of a kernel parameter of type `t`."""
    import torch

    where = location_str(kernel.location)
    if getattr(t, "name", "") == "tt.ptr":
        if arg is None:
            return np.int64(0)
        if isinstance(arg, torch.Tensor):
            return np.int64(arg.data_ptr())
        if isinstance(arg, int):
            return np.int64(arg)
        raise InterpretationError(f"{where}: error: '{name}' is a pointer but got {type(arg).__name__}")
    if isinstance(arg, torch.Tensor):
        if arg.numel() != 1:
            raise InterpretationError(f"{where}: error: '{name}' is a scalar of type {t} but got a tensor")
        arg = arg.item()
    if isinstance(t, builtin.IntegerType) and not isinstance(arg, bool | int | np.integer):
        raise InterpretationError(f"{where}: error: '{name}' is {t} but got {type(arg).__name__} {arg!r}")
    if isinstance(t, builtin.IntegerType) and t.width.data > 1:
        lo, hi = -(1 << (t.width.data - 1)), (1 << t.width.data) - 1
        if not lo <= int(arg) <= hi:
            raise InterpretationError(f"{where}: error: '{name}' = {arg} does not fit in {t}")
    return as_value(np.asarray(arg), t)
