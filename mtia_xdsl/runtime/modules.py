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
    KernelLaunchError (located) for a tensor whose element type is not its pointer parameter's;
    KernelRuntimeError (located, with the program id) for an error while the kernel runs; ExecutorChoiceError /
    ExecutorUnavailableError for an unknown or unavailable executor; TypeError or ValueError for bad options.
    Example: run = run_module(parse_ttir(text, make_context()), 4, [x, y, out, 4096]); print(run.format())
    """
    opts = options if isinstance(options, MtiaOptions) else MtiaOptions.from_dict(dict(options or {}), strict=True)
    run_args = host_arguments(args)
    _check_pointer_arguments(module, kernel_name, run_args)  # the caller's types (lowering makes fp8 pointees i8)
    program = module
    if not is_buffer_level(module):
        program = toolchain.lower(clone_op(module), opts, module)  # `module` stays as it is
    dims = tuple(grid) if isinstance(grid, list | tuple) else (grid,)  # a wrong grid is named by run_kernel
    result = toolchain.run_kernel(program, dims, run_args, opts)  # type: ignore[arg-type]
    run = KernelRun.from_result(result)
    assert run is not None  # a run always has a result
    return run


_TRITON_FLOATS = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64"}


def _check_pointer_arguments(module: ModuleOp, kernel_name: str | None, args: Sequence[Any]) -> None:
    """Raise KernelLaunchError at the kernel's line for a tensor whose element type is not its pointer's pointee.

    The rule is Triton's (`launch.pointer_fits`, as `mtia-run` checks): the pointee TTIR gives the tensor's
    dtype, integers signless (a uint8 tensor fits `*i8`, a bool one only `*i1`), so a float64 array is not
    read as float32 bits.
    """
    import torch

    from mtia_xdsl.dialects import tt
    from mtia_xdsl.machine.interpret.formats import element_format
    from mtia_xdsl.machine.reference import find_kernel
    from mtia_xdsl.runtime.launch import KernelLaunchError, argument_type, pointer_fits
    from mtia_xdsl.utils.locations import location_str

    kernel = find_kernel(module, kernel_name)
    params = kernel.regions[0].blocks[0].args
    for i, (param, arg) in enumerate(zip(params, args, strict=False)):
        if not isinstance(param.type, tt.PointerType) or not isinstance(arg, torch.Tensor):
            continue
        name = param.name_hint or f"#{i}"
        got = argument_type(location_str(kernel.location), name, arg)
        if not pointer_fits(got, param.type):
            want = element_format(param.type.pointee_type).name
            spelled = "*" + _TRITON_FLOATS.get(want, want)
            raise KernelLaunchError(
                f"{location_str(kernel.location)}: error: argument '{name}' is a {got} tensor but the "
                f"kernel takes {spelled} ({param.type}); pass a tensor of that element type (x.to(...))"
            )
