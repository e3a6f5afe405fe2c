"""mtia_xdsl: Triton kernels compiled through xDSL for Meta's MTIA-2i, run on a machine model of the chip.

Public API: the names in `__all__` of this package and of its public modules; every other module and name is
internal and may change in any release (CHANGELOG.md records the public API's changes).

- `mtia_xdsl` (this package): `compile` (a `@triton.jit` kernel to a `CompiledKernel` with `.asm` and
  `[grid](*args)`), `MtiaOptions` (its options), `run_module` (a tt-level or buffer-level xDSL module of
  yours on the model), `last_report` / `last_run` (the most recent launch through the Triton backend),
  `KernelRun` (report, timeline, traces of a launch), `KernelRuntimeError`, `__version__`.
- `mtia_xdsl.dialects`: our dialects (`tt`, `ttg`, `mtia`, tensor-capable `arith`) for your xDSL context.
- `mtia_xdsl.passes`: our passes and the default pipeline, for your pass manager or `xdsl-opt`-style driver.
- `mtia_xdsl.frontend`: a `tt` module from a Triton kernel or from TTIR text.
- `mtia_xdsl.machine`: `MachineConfig` and its presets, running buffer-level programs, reports, timelines.
- `mtia_xdsl.errors`: the exceptions a caller may catch.
- `mtia_xdsl.language` (`import mtia_xdsl.language as mtl`): the MTIA language extensions; importing
  mtia_xdsl also makes them `tl.mtia.<name>` (and `tl.extract_slice`) on `triton.language`.
- the `mtia-opt`, `mtia-run` and `mtia-sweep` command-line tools, and the Triton backend `cpu`
  (entry point group `triton.backends`) that runs plain `kernel[grid](...)` launches and `torch.compile`.

Importing this package imports neither Triton nor xDSL; each name is loaded on first use.
"""

from typing import TYPE_CHECKING, Any

from mtia_xdsl.language.spellings import install_when_imported as _install_spellings

if TYPE_CHECKING:
    from mtia_xdsl.options import MtiaOptions
    from mtia_xdsl.runtime.api import CompiledKernel, compile
    from mtia_xdsl.runtime.errors import KernelRuntimeError
    from mtia_xdsl.runtime.modules import run_module
    from mtia_xdsl.runtime.result import KernelRun

__version__ = "0.1.0"
"""The package version (the one place it is written: pyproject.toml reads it)."""

__all__ = [
    "CompiledKernel",
    "KernelRun",
    "KernelRuntimeError",
    "MtiaOptions",
    "__version__",
    "compile",
    "last_report",
    "last_run",
    "run_module",
]

_LAZY = {
    "compile": "mtia_xdsl.runtime.api",
    "CompiledKernel": "mtia_xdsl.runtime.api",
    "KernelRun": "mtia_xdsl.runtime.result",
    "KernelRuntimeError": "mtia_xdsl.runtime.errors",
    "MtiaOptions": "mtia_xdsl.options",
    "run_module": "mtia_xdsl.runtime.modules",
}

_install_spellings()


def last_report() -> Any:
    """Return the machine-model Report of the most recent launch through the Triton backend, or None.

    Example: `add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024); print(mtia_xdsl.last_report().format())`
    """
    result = _last_result()
    return None if result is None else result.report


def last_run() -> "KernelRun | None":
    """Return the KernelRun (report, timeline, traces) of the most recent launch through the Triton backend.

    None if nothing ran (no launch yet, an empty grid, or another Triton driver is active). Launches of
    `mtia_xdsl.compile` kernels return their result directly and keep it as `kernel.last_run`.
    Example: `add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024); mtia_xdsl.last_run().write_trace("add.json")`
    """
    from mtia_xdsl.runtime.result import KernelRun

    return KernelRun.from_result(_last_result())


def _last_result() -> Any:
    from triton.runtime import driver  # pyright: ignore[reportMissingTypeStubs]

    return getattr(driver.active, "last_result", None)


def __getattr__(name: str) -> Any:
    """The names of `_LAZY`, imported on first use (their modules import Triton or xDSL)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mtia_xdsl' has no attribute {name!r}")
