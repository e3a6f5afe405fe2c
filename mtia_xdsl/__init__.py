"""mtia_xdsl: Triton kernels compiled through xDSL for Meta's MTIA-2i, run on a machine model.

Public entry points:
  - `mtia_xdsl.compile(fn, signature=None, constexprs=None, options=None)`: a compiled kernel with
    `.asm` (ttir, mtia) and `[grid](*args)`.
  - the `mtia-opt` and `mtia-run` command-line tools.
"""

from typing import Any

__version__ = "0.1.0"


def compile(*args: Any, **kwargs: Any) -> Any:
    """Compile a `@triton.jit` kernel for MTIA-2i; see `mtia_xdsl.runtime.api.compile`."""
    from mtia_xdsl.runtime.api import compile as _compile

    return _compile(*args, **kwargs)


def last_report() -> Any:
    """Return the machine-model Report of the most recent launch through the Triton backend, or None.

    Example: add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024); print(mtia_xdsl.last_report().format())
    """
    from triton.runtime import driver

    result = getattr(driver.active, "last_result", None)
    return None if result is None else result.report
