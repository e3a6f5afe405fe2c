"""Frontend errors: what a user can reach while building a kernel's tt module."""

from __future__ import annotations

import functools
from typing import Any

from triton.compiler.errors import CompilationError


class KernelError(CompilationError):
    """An error in a Triton kernel, reported as `file:line:col: error: message`.

    Raised by the builder for constructs mtia_xdsl does not support, and by `build_tt_module` for every
    failure inside Triton's code generator (the message then names the kernel's file and line). It is a
    `triton.CompilationError` (so a `triton.TritonError`), as upstream's compile errors are;
    `located_error_class` gives the subclass that is also the more specific upstream type (for example
    `CompileTimeAssertionFailure` for a failed `tl.static_assert`). `error_message` is the message
    without the location, as on upstream's errors.
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.src = None
        self.node = None
        self.error_message = message
        where = ""
        if file is not None:
            where = f"{file}:{line}:{col}: " if line is not None else f"{file}: "
        self.text = f"{where}error: {message}"
        Exception.__init__(self, self.text)

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (
                type(self).__mro__[2] if _is_located_subclass(type(self)) else None,
                self.message,
                self.file,
                self.line,
                self.col,
            ),
        )


class UnsupportedConstruct(KernelError):
    """A Triton construct the builder cannot express in the tt dialect (yet)."""


def _is_located_subclass(cls: type) -> bool:
    return getattr(cls, "__mtia_located__", False)


@functools.cache
def located_error_class(upstream: type[CompilationError]) -> type[KernelError]:
    """Return a KernelError class that is also `upstream` (a CompilationError subclass Triton raised).

    Example: located_error_class(CompileTimeAssertionFailure)(msg, file, line, col) is caught by
    `except CompileTimeAssertionFailure` and by `except KernelError`.
    """
    if issubclass(upstream, KernelError) or upstream is CompilationError:
        return KernelError
    return type(upstream.__name__, (KernelError, upstream), {"__mtia_located__": True, "__module__": __name__})


def _rebuild(upstream: type[CompilationError] | None, *args: Any) -> KernelError:
    cls = KernelError if upstream is None else located_error_class(upstream)
    return cls(*args)
