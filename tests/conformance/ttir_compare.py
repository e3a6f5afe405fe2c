"""TTIR op for op: our tt module, printed generic, parsed by libtriton and run through upstream's TTIR passes.

Both sides go through the passes of Triton's `make_ttir` (inliner, canonicalizer, combine, reorder-broadcast,
cse, licm, symbol-dce, loop-unroll) and are printed without debug locations. Upstream's side is
`ASTSource.make_ir` with libtriton's own builder for a CUDA sm90 target (ieee dot precision, which
`FrontendOptions` defaults to as well).
"""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path
from typing import Any

from triton._C.libtriton import ir
from xdsl.printer import Printer

from mtia_xdsl.frontend import FrontendOptions, build_tt_module, inline_and_clean
from tests.conformance.make_ttir import run_make_ttir


def _run_ttir_passes(mod: Any) -> str:
    run_make_ttir(mod)
    return mod.str_nodebug()


def _new_context() -> Any:
    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx


def upstream_ttir(
    fn: Any, signature: dict[str, str], constexprs: dict[str, Any], debug: bool = False, capability: int = 90
) -> str:
    """Return upstream's TTIR for the kernel (libtriton's builder, CUDA sm`capability`, ieee dot precision).

    sm90 by default: it accepts fp8e4nv, which sm80 refuses."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler.compiler import ASTSource

    target = GPUTarget("cuda", capability, 32)
    backend = CUDABackend(target)
    options = backend.parse_options({"default_dot_input_precision": "ieee", "debug": debug})
    ctx = _new_context()
    backend.load_dialects(ctx)
    src = ASTSource(fn, signature, constexprs)
    mod = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    return _run_ttir_passes(mod)


def our_ttir(fn: Any, signature: dict[str, str], constexprs: dict[str, Any], debug: bool = False) -> str:
    """Return our module, cleaned, printed generic, parsed by libtriton and run through the same passes."""
    options = FrontendOptions(sanitize_overflow=True, debug=debug)  # as upstream's CUDA options
    module = inline_and_clean(build_tt_module(fn, signature, constexprs, options=options))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ours.mlir"
        with path.open("w") as f:
            Printer(stream=f, print_generic_format=True).print_op(module)
        ctx = _new_context()
        mod = ir.parse_mlir_module(str(path), ctx)
        mod.context = ctx
        return _run_ttir_passes(mod)


def ttir_difference(ours: str, upstream: str) -> str | None:
    """Return None if equal, else a short unified diff (first lines) of upstream -> ours."""
    if ours == upstream:
        return None
    diff = difflib.unified_diff(upstream.splitlines(), ours.splitlines(), "upstream", "ours", lineterm="", n=1)
    return "\n".join(list(diff)[:40])
