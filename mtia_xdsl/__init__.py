"""mtia_xdsl: Triton kernels compiled through xDSL for Meta's MTIA-2i, run on a machine model.

Public entry points:
  - `mtia_xdsl.compile(fn, signature=None, constexprs=None, options=None)`: a compiled kernel with
    `.asm` (ttir, mtia) and `[grid](*args)`.
  - `mtia_xdsl.last_report()` / `mtia_xdsl.last_run()`: the machine-model report (and timeline, with
    `.write_trace(path)` for a Chrome/Perfetto trace) of the most recent launch through the Triton backend.
  - `mtia_xdsl.language` (`import mtia_xdsl.language as mtl`): the MTIA language extensions; importing
    mtia_xdsl also makes them `tl.mtia.<name>` (and `tl.extract_slice`) on `triton.language`.
  - `mtia_xdsl.KernelRuntimeError`: what a launch raises for an error found while the kernel runs on the
    model (out-of-bounds access, failed device_assert, ...); a RuntimeError and Triton's InterpreterError.
  - the `mtia-opt` and `mtia-run` command-line tools.
"""

from typing import TYPE_CHECKING, Any

from mtia_xdsl.language.spellings import install_when_imported as _install_spellings

if TYPE_CHECKING:
    from mtia_xdsl.runtime.errors import KernelRuntimeError as KernelRuntimeError

__version__ = "0.1.0"

_install_spellings()


def compile(*args: Any, **kwargs: Any) -> Any:
    """Compile a `@triton.jit` kernel for MTIA-2i; see `mtia_xdsl.runtime.api.compile`."""
    from mtia_xdsl.runtime.api import compile as _compile

    return _compile(*args, **kwargs)


def last_report() -> Any:
    """Return the machine-model Report of the most recent launch through the Triton backend, or None.

    Example: add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024); print(mtia_xdsl.last_report().format())
    """
    result = _last_result()
    return None if result is None else result.report


def last_run() -> Any:
    """Return the KernelRun (report, timeline, traces) of the most recent launch through the Triton backend.

    None if nothing ran (no launch yet, an empty grid, or another Triton driver is active). Launches of
    `mtia_xdsl.compile` kernels return their result directly and keep it as `kernel.last_run`.
    Example: add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024); mtia_xdsl.last_run().write_trace("add.json")
    """
    from mtia_xdsl.runtime.result import KernelRun

    return KernelRun.from_result(_last_result())


def _last_result() -> Any:
    from triton.runtime import driver

    return getattr(driver.active, "last_result", None)


def __getattr__(name: str) -> Any:
    """`KernelRuntimeError`, imported on first use (its module imports triton)."""
    if name == "KernelRuntimeError":
        from mtia_xdsl.runtime.errors import KernelRuntimeError

        return KernelRuntimeError
    raise AttributeError(f"module 'mtia_xdsl' has no attribute {name!r}")
