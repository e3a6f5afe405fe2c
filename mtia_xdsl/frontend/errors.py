"""Frontend errors: what a user can reach while building a kernel's tt module."""

from __future__ import annotations


class KernelError(Exception):
    """An error in a Triton kernel, reported as `file:line:col: error: message`.

    Raised by the builder for constructs mtia_xdsl does not support, and by `build_tt_module` for every
    failure inside Triton's code generator (the message then names the kernel's file and line).
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        where = ""
        if file is not None:
            where = f"{file}:{line}:{col}: " if line is not None else f"{file}: "
        super().__init__(f"{where}error: {message}")


class UnsupportedConstruct(KernelError):
    """A Triton construct the builder cannot express in the tt dialect (yet)."""
