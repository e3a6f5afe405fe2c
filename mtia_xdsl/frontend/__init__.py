"""Frontend: a `tt` module from an unmodified `@triton.jit` kernel (Triton's own code generator) or TTIR text.

Public API (`__all__`): `build_tt_module` (kernel -> tt module), `parse_ttir` (upstream or our TTIR text ->
tt module), `inline_and_clean` (inline helper calls), `FrontendOptions`, `KernelError`. The module you get is
yours: lower it with `mtia_xdsl.passes`, run it with `mtia_xdsl.run_module`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mtia_xdsl.utils.lazy_formats import install as _install_lazy_formats

_install_lazy_formats()  # before the builder imports xDSL's dialects (utils/lazy_formats.py)

from mtia_xdsl.frontend.build import FrontendOptions, build_tt_module  # noqa: E402
from mtia_xdsl.frontend.errors import KernelError  # noqa: E402
from mtia_xdsl.transforms.canonicalization.tt import inline_and_clean  # noqa: E402

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

__all__ = ["FrontendOptions", "KernelError", "build_tt_module", "inline_and_clean", "parse_ttir"]


def parse_ttir(text: str, ctx: Context | None = None, name: str = "<ttir>", *, verify: bool = True) -> ModuleOp:
    """Parse TTIR text (upstream libtriton's, custom or generic form, or ours) into a tt module.

    `ctx`: a context holding our dialects (`mtia_xdsl.dialects.register_dialects`; default a new
    `make_context()`). `name` names the text in errors (a file path). Location aliases that libtriton prints
    after the module are accepted. `verify=False` skips verifying the module.
    Raises: ParseError naming `name`, line and column; VerifyException naming `name`, the line and the op
    for an op that does not verify.
    Example: parse_ttir(Path("add.ttir").read_text(), name="add.ttir")
    """
    from mtia_xdsl.dialects import make_context
    from mtia_xdsl.frontend.ttir_import import parse_ttir as parse
    from mtia_xdsl.frontend.ttir_import import verify_parsed

    module = parse(text, ctx if ctx is not None else make_context(), name)
    if verify:
        verify_parsed(module, text, name)
    return module
