"""Where user code called in: the kernel line of an MTIA language extension used outside mtia_xdsl."""

from __future__ import annotations

import inspect
import os

_OWN_DIRS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # mtia_xdsl
    os.path.dirname(os.path.abspath(inspect.getfile(inspect))),  # the standard library
)


class ExtensionError(RuntimeError):
    """An MTIA language extension used where mtia_xdsl does not compile the kernel."""


def caller_line() -> str:
    """Return `file:line` of the innermost frame outside mtia_xdsl, Triton and the standard library."""
    import triton

    skip = (*_OWN_DIRS, os.path.dirname(os.path.abspath(triton.__file__)))
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(skip):
            return f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown location>"


def in_triton_interpreter() -> bool:
    """Return whether Triton's interpreter (TRITON_INTERPRET=1) is running the calling code."""
    import triton.runtime.interpreter as interpreter

    own = os.path.abspath(interpreter.__file__)
    frame = inspect.currentframe()
    while frame is not None:
        if os.path.abspath(frame.f_code.co_filename) == own:
            return True
        frame = frame.f_back
    return False
