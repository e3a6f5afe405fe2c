"""The MTIA-2i machine model: configuration, functional interpretation, timing and reports.

Public API (`__all__`): `MachineConfig` and its presets (`MachineConfig.preset(name)`,
`MachineConfig.PRESET_NAMES`, `DEFAULT_CHIP`), `derive_config` (a preset with overrides), `PE_MAPPINGS`;
`run_kernel` (a buffer-level program on the model: results, `Report`, `Timeline`), `run_tt` (a tt-level
module through the reference semantics: results only, no cycles) and the result types `RunResult`, `Report`,
`Timeline`. To lower a tt-level module and run it on the model in one call, use `mtia_xdsl.run_module`.

Kernel arguments are the kernel's non-constexpr parameters in order: torch CPU tensors or numpy arrays for
pointers (results are written into them, sharing memory), Python or numpy numbers for scalars. Every
hardware number comes from `MachineConfig`; docs/machine.md lists each with its source.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from mtia_xdsl.machine.compiled import install as _install_compiled
from mtia_xdsl.machine.config import DEFAULT_CHIP, PE_MAPPINGS, MachineConfig, derive_config

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from mtia_xdsl.machine.report import Report
    from mtia_xdsl.machine.run import RunResult
    from mtia_xdsl.machine.timeline import Timeline

__all__ = [
    "DEFAULT_CHIP",
    "PE_MAPPINGS",
    "MachineConfig",
    "Report",
    "RunResult",
    "Timeline",
    "derive_config",
    "host_arguments",
    "run_kernel",
    "run_tt",
]

_install_compiled()  # the timing model's compiled build, when one is current (machine/compiled.py)

_LAZY = {
    "Report": "mtia_xdsl.machine.report",
    "RunResult": "mtia_xdsl.machine.run",
    "Timeline": "mtia_xdsl.machine.timeline",
}


def host_arguments(args: Sequence[Any]) -> list[Any]:
    """Return `args` with numpy arrays as torch tensors sharing their memory and numpy scalars as Python numbers.

    Shapes: an array keeps its shape and strides (`torch.from_numpy`); the kernel addresses it by the
    strides it is given, as Triton does. A read-only array's tensor is marked (`mark_read_only`): a run that
    stores into it fails, writing no tensor. Everything else is returned as it is.
    Raises: TypeError naming the argument for a numpy dtype torch cannot share (e.g. a structured dtype).
    """
    import numpy as np

    out: list[Any] = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            array = cast("np.ndarray[Any, np.dtype[Any]]", a)
            import warnings

            import torch

            from mtia_xdsl.machine.interpret.global_memory import mark_read_only

            try:
                with warnings.catch_warnings():  # a read-only input array is fine; a store into one is refused
                    warnings.simplefilter("ignore", UserWarning)
                    tensor = torch.from_numpy(array)  # pyright: ignore[reportUnknownMemberType]
                out.append(tensor if array.flags.writeable else mark_read_only(tensor))
            except TypeError as e:
                raise TypeError(
                    f"kernel argument #{i}: numpy array of dtype {array.dtype} cannot be passed: {e}"
                ) from None
        elif isinstance(a, np.generic):
            out.append(a.item())
        else:
            out.append(a)
    return out


def _checked(module: object, grid: object) -> tuple[int, ...]:
    """`grid` (an int or 1 to 3 ints) as a tuple, after checking that `module` is a ModuleOp.

    Raises: TypeError naming the argument and what to give instead.
    """
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp

    if not isinstance(module, ModuleOp):
        raise TypeError(f"module must be an xdsl ModuleOp (a tt- or buffer-level module), got {type(module).__name__}")
    items: list[object] = [grid] if isinstance(grid, int) else list(grid) if isinstance(grid, list | tuple) else []  # pyright: ignore[reportUnknownArgumentType]
    if not 1 <= len(items) <= 3 or not all(isinstance(g, int | np.integer) and not isinstance(g, bool) for g in items):
        raise TypeError(f"grid must be an int or 1 to 3 ints (program counts, x fastest), got {grid!r}")
    return tuple(int(g) for g in items)  # pyright: ignore[reportArgumentType]


def run_kernel(
    module: ModuleOp,
    grid: int | Sequence[int],
    args: Sequence[Any],
    options: Any = None,
    kernel_name: str | None = None,
    max_batch: int | None = None,
) -> RunResult:
    """Run the buffer-level kernel of `module` for every program id of `grid` on the model and time it.

    Shapes: `grid` is an int or 1 to 3 ints (program ids x fastest). `args`: as the module docstring says.
    `options`: an `MtiaOptions` (its `machine`, `machine_overrides`, `pe_mapping`, `pe_subgrid`) or None (the
    module's `mtia.target` and attributes). `kernel_name`: the `tt.func` to run if the module has several.
    Units: the result's `report.total_cycles` in cycles of `MachineConfig.clock_hz`, `report.time_us` in
    microseconds; bytes are chip totals. Results are written into the arrays only if the whole launch
    succeeded. The module must be buffer level (`mtia_xdsl.passes.lower`); `mtia_xdsl.run_module` takes
    either level.
    Raises: InterpretationError naming the kernel line and program id (out-of-bounds access, CB protocol
    misuse, deadlock, wrong arguments); no array is written then. TypeError for a `module` or `grid` of the
    wrong type.
    """
    from mtia_xdsl.machine.run import run_kernel as run

    return run(module, _checked(module, grid), host_arguments(args), options, kernel_name, max_batch)


def run_tt(
    module: ModuleOp,
    grid: int | Sequence[int],
    args: Sequence[Any],
    kernel_name: str | None = None,
    options: Any = None,
) -> None:
    """Run a tt-level kernel through the reference semantics (each op as Triton defines it) for every program id.

    Results only, no cycles: the oracle each pass is checked against. Arguments, `grid` and `kernel_name` as
    `run_kernel`; results are written into the arrays only if every program succeeded.
    Raises: InterpretationError naming the kernel line and program id; TypeError as `run_kernel`.
    """
    from mtia_xdsl.machine.reference import run_tt as run

    run(module, _checked(module, grid), host_arguments(args), kernel_name, options)  # type: ignore[arg-type]  # checked there


def __getattr__(name: str) -> Any:
    """`Report`, `RunResult` and `Timeline`, imported on first use (the simulator is not loaded with the config)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mtia_xdsl.machine' has no attribute {name!r}")
