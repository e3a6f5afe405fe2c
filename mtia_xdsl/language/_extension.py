"""The `extension` decorator: a Triton builtin that only mtia_xdsl's frontend can build.

Triton's code generator calls a function marked as a builtin with `_semantic=` its semantic layer, whose
`builder` is, under mtia_xdsl, our `XdslBuilder`. Anywhere else (Triton's interpreter with
TRITON_INTERPRET=1, another backend's libtriton builder, a call outside `@triton.jit`) the extension
refuses with an error naming the kernel line and saying what to do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from mtia_xdsl.utils.caller import ExtensionError, caller_line

F = TypeVar("F", bound=Callable[..., Any])


__all__ = ["ExtensionError", "caller_line", "extension", "is_mtia_semantic", "misuse"]

_OTHER_BACKEND = "another Triton backend"


def misuse(message: str) -> Exception:
    """Return the error for a wrong use of an extension inside a kernel (located by the frontend)."""
    from mtia_xdsl.frontend.errors import KernelError

    return KernelError(message)


def _runner(semantic: Any) -> str:
    """Name what is running the kernel when it is not mtia_xdsl."""
    if semantic is None:
        return "Triton's interpreter (TRITON_INTERPRET=1) or outside @triton.jit"
    if type(getattr(semantic, "builder", None)).__name__ == "InterpreterBuilder":
        return "Triton's interpreter (TRITON_INTERPRET=1)"
    return _OTHER_BACKEND


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
            runner = _runner(_semantic)
            # another backend's code generator wraps this in a CompilationError at the kernel line; under the
            # interpreter the kernel runs as Python, so the calling frame is the kernel line
            where = "" if runner == _OTHER_BACKEND else f"{caller_line()}: error: "
            raise ExtensionError(
                f"{where}{name} is an MTIA language extension and cannot run under "
                f"{runner}; launch the kernel on CPU tensors with mtia_xdsl installed (its Triton "
                "backend) or compile it with mtia_xdsl.compile, and unset TRITON_INTERPRET"
            )
        return fn(*args, _semantic=_semantic, **kwargs)

    wrapper.__triton_builtin__ = True  # type: ignore[attr-defined]  # triton.language.core.TRITON_BUILTIN
    wrapper.signature = inspect.signature(fn)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
