"""`run_module`: run an xDSL module of a caller's, tt level or buffer level, on the machine model.

The entry point for compilers that build or transform IR themselves (`mtia_xdsl.frontend`,
`mtia_xdsl.passes`) rather than launching `@triton.jit` kernels; `mtia-run` does the same from the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from mtia_xdsl.machine import host_arguments
from mtia_xdsl.options import MtiaOptions
from mtia_xdsl.runtime import toolchain
from mtia_xdsl.runtime.result import KernelRun
from mtia_xdsl.utils.clone import clone_op


def is_buffer_level(module: ModuleOp) -> bool:
    """Whether `module` is a buffer-level mtia program (it allocates circular buffers), not yet tt level."""
    return any(op.name == "mtia.cb_alloc" for op in module.walk())


def run_module(
    module: ModuleOp,
    grid: int | Sequence[int],
    args: Sequence[Any],
    *,
    options: MtiaOptions | dict[str, Any] | None = None,
    kernel_name: str | None = None,
) -> KernelRun:
    """Run the kernel of `module` for every program id of `grid` on the machine model; return its KernelRun.

    A tt-level module (as `mtia_xdsl.frontend.build_tt_module` or `parse_ttir` give it) is lowered first, as
    `mtia_xdsl.compile` lowers it (`mtia_xdsl.passes.lower` on a copy: the caller's module is not changed);
    a buffer-level module runs as it is. `options`: an MtiaOptions or a dict of its fields (`machine`,
    `machine_overrides`, `num_stages`, `executor`, ...; the executor is the option, else `MTIA_EXECUTOR`, else the
    model, and every executor is timed by the model). `kernel_name`: the `tt.func` to run if the module has several.
    Shapes: `grid` is an int or 1 to 3 ints. `args` are the kernel's non-constexpr parameters in order:
    torch CPU tensors or numpy arrays for pointers (results are written into them, sharing memory, only if
    the whole launch succeeded), Python or numpy numbers for scalars.
    Units: `report.total_cycles` in cycles at `MachineConfig.clock_hz`, `report.time_us` in microseconds.
    Raises: PassFailedException at the kernel line of a construct that cannot be lowered;
    LocalStorageOutOfResources / CbIdsOutOfResources (Triton's OutOfResources) when the CBs do not fit a PE;
    KernelRuntimeError (located, with the program id) for an error while the kernel runs; ExecutorChoiceError /
    ExecutorUnavailableError for an unknown or unavailable executor; TypeError or ValueError for bad options.
    Example: run = run_module(parse_ttir(text, make_context()), 4, [x, y, out, 4096]); print(run.format())
    """
    opts = options if isinstance(options, MtiaOptions) else MtiaOptions.from_dict(dict(options or {}), strict=True)
    program = module
    if not is_buffer_level(module):
        program = toolchain.lower(clone_op(module), opts, module)  # `module` stays as it is
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    result = toolchain.run_kernel(program, dims, host_arguments(args), opts)  # type: ignore[arg-type]
    run = KernelRun.from_result(result)
    assert run is not None  # a run always has a result
    return run
