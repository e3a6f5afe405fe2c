"""Frontend: unmodified `@triton.jit` kernels -> xDSL `tt` modules via Triton's own code generator.

Public API: `build_tt_module(fn, signature, constexprs, attrs, options) -> ModuleOp`,
`inline_and_clean(module)`, `KernelError`.
"""

from mtia_xdsl.frontend.build import FrontendOptions, build_tt_module
from mtia_xdsl.frontend.errors import KernelError
from mtia_xdsl.transforms.canonicalization.tt import inline_and_clean

__all__ = ["FrontendOptions", "KernelError", "build_tt_module", "inline_and_clean"]
