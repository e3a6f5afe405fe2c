"""The `extension` decorator: a Triton builtin that only mtia_xdsl's frontend can build.

Triton's code generator calls a function marked as a builtin with `_semantic=` its semantic layer, whose
`builder` is, under mtia_xdsl, our `XdslBuilder`. Anywhere else (Triton's interpreter with
TRITON_INTERPRET=1, another backend's libtriton builder, a call outside `@triton.jit`) the extension
refuses with an error naming the kernel line and saying what to do.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from mtia_xdsl.utils.caller import ExtensionError, caller_line, in_triton_interpreter

F = TypeVar("F", bound=Callable[..., Any])


__all__ = ["ExtensionError", "caller_line", "describe", "extension", "is_mtia_semantic", "misuse", "static_hint"]

_HOW = (
    "launch the kernel on CPU tensors with mtia_xdsl installed (its Triton backend) or compile it with "
    "mtia_xdsl.compile"
)


def misuse(message: str) -> Exception:
    """Return the error for a wrong use of an extension inside a kernel (located by the frontend)."""
    from mtia_xdsl.frontend.errors import KernelError

    return KernelError(message)


def _language() -> Any:
    return importlib.import_module("triton.language")  # untyped: Triton ships no stubs


def describe(value: Any) -> str:
    """Name an argument of an extension in an error: a constant by its value, a kernel value by its type."""
    tl = _language()
    if isinstance(value, tl.tensor):
        what = "a tile" if value.type.is_block() else "a value"
        return f"{what} computed at run time ({value.type})"
    return repr(value.value if isinstance(value, tl.constexpr) else value)


def static_hint(value: Any) -> str:
    """The advice for a kernel value where an extension needs a compile-time constant, else ""."""
    if isinstance(value, _language().tensor):
        return "; it must be known when the kernel compiles: a literal or a tl.constexpr parameter"
    return ""


def _refusal(name: str, semantic: Any) -> str:
    """The error for extension `name` run by something other than mtia_xdsl's frontend."""
    interpreted = type(getattr(semantic, "builder", None)).__name__ == "InterpreterBuilder"
    if semantic is not None and not interpreted:
        # another backend's code generator wraps this in a CompilationError at the kernel line
        return f"{name} is an MTIA language extension and cannot run under another Triton backend; {_HOW}"
    # under the interpreter the kernel runs as Python, so the calling frame is the kernel line
    where = f"{caller_line()}: error: "
    if interpreted or in_triton_interpreter():
        return (
            f"{where}{name} is an MTIA language extension and cannot run under Triton's interpreter "
            f"(TRITON_INTERPRET=1); unset TRITON_INTERPRET and {_HOW}"
        )
    return f"{where}{name} is an MTIA language extension: call it inside a @triton.jit kernel ({_HOW})"


def is_mtia_semantic(semantic: Any) -> bool:
    """Return whether `semantic` is Triton's semantic layer driving mtia_xdsl's builder."""
    from mtia_xdsl.frontend.builder import XdslBuilder

    return isinstance(getattr(semantic, "builder", None), XdslBuilder)


def extension(fn: F) -> F:
    """Mark `fn(..., _semantic)` as a Triton builtin that runs only under mtia_xdsl's frontend.

    Raises (from the wrapper): ExtensionError naming the calling kernel line when `_semantic` is missing
    (TRITON_INTERPRET=1, or a call outside a `@triton.jit` function) or belongs to another backend.
    """
    name = f"mtl.{fn.__name__}"

    @wraps(fn)
    def wrapper(*args: Any, _semantic: Any = None, **kwargs: Any) -> Any:
        if not is_mtia_semantic(_semantic):
            raise ExtensionError(_refusal(name, _semantic))
        return fn(*args, _semantic=_semantic, **kwargs)

    wrapper.__triton_builtin__ = True  # type: ignore[attr-defined]  # triton.language.core.TRITON_BUILTIN
    wrapper.signature = inspect.signature(fn)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
