"""The three compiler entry points the runtime drives: frontend, pipeline, executor (machine model by default).

Each is imported on first use, so the runtime (and the Triton plugin, which Triton imports while
`import triton` is still running) loads without them; tests replace these functions with doubles.
"""

from typing import Any

from xdsl.dialects.builtin import ModuleOp


def build_tt_module(
    fn: Any,
    signature: dict[str, str],
    constexprs: dict[Any, Any] | None,
    attrs: dict[Any, Any] | None = None,
    options: Any = None,
) -> ModuleOp:
    """Build the tt module of a `@triton.jit` function; see `mtia_xdsl.frontend.build_tt_module`.

    The module is not verified here: the runtime always lowers it next (`lower`), which verifies the
    lowered module with `MTIA_VERIFY_IR=1` or the debug option (`mtia_xdsl.pipeline.verify_ir`).
    """
    from mtia_xdsl.frontend import build_tt_module as build

    return build(fn, signature, constexprs, attrs, options, verify=False)


def lower(module: ModuleOp, options: Any, original: ModuleOp | None = None) -> ModuleOp:
    """Lower a tt module in place to the buffer-level mtia program; see `mtia_xdsl.pipeline.lower`
    (`original`: an unmodified copy of `module` the caller keeps, which fitting reuses).

    Raises: LocalStorageOutOfResources / CbIdsOutOfResources (Triton's OutOfResources, which
    `@triton.autotune` skips) when the kernel's CBs do not fit a PE's local storage or its CB IDs
    (`MachineConfig.cb_ids`), from `mtia_xdsl.compile` and launches alike.
    """
    from mtia_xdsl.pipeline import lower as lower_module
    from mtia_xdsl.runtime.errors import CbIdsOutOfResources, LocalStorageOutOfResources
    from mtia_xdsl.transforms.errors import CbIdOverflow, LocalStorageOverflow

    try:
        return lower_module(module, options, original)
    except LocalStorageOverflow as e:
        raise LocalStorageOutOfResources(e.required_bytes, e.limit_bytes, str(e)) from None
    except CbIdOverflow as e:
        raise CbIdsOutOfResources(e.required, e.limit, str(e)) from None


def run_kernel(module: ModuleOp, grid: tuple[int, int, int], args: list[Any], options: Any) -> Any:
    """Run a buffer-level program with the launch's executor and return its machine.run.RunResult.

    The executor is `options.executor`, else the environment variable `MTIA_EXECUTOR`, else the machine
    model (`mtia_xdsl.backend.executor`); every executor is timed by the same model. The result's report
    lists the program's CBs (depth, bytes, CB ID, LS offset, why: `mtia_xdsl.machine.report.cb_report`) and
    how the compiler made them fit (`mtia_xdsl.fit.fit_lines`).
    Raises: KernelRuntimeError (`mtia_xdsl.KernelRuntimeError`) with the machine model's located message for
    an error found while the kernel runs (out-of-bounds access, failed device_assert, deadlock, misuse);
    ExecutorChoiceError (a ValueError) for an unknown executor name; ExecutorUnavailableError (one line)
    when the chosen executor's path or toolchain is missing.
    """
    import os

    from xdsl.utils.exceptions import InterpretationError

    from mtia_xdsl.backend import executor
    from mtia_xdsl.fit import fit_lines
    from mtia_xdsl.machine.report import cb_report
    from mtia_xdsl.machine.run import module_fact
    from mtia_xdsl.runtime.errors import KernelRuntimeError

    name = executor.choose(getattr(options, "executor", None), os.environ)
    try:
        result = executor.run(name, module, grid, args, options)
    except KernelRuntimeError:
        raise
    except InterpretationError as e:
        raise KernelRuntimeError(str(e)) from e.__cause__
    report = getattr(result, "report", None)
    if report is not None and hasattr(report, "cbs"):
        report.cbs = list(module_fact(module, "cb_report", lambda: cb_report(module)))  # a launch's own list
        report.fit = fit_lines(module)
    return result
