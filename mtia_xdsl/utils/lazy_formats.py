"""Declarative assembly formats of the compiler's dialects parsed when an op is first printed or parsed.

xDSL parses each op's `assembly_format` string into a `FormatProgram` while the op class is defined
(`irdl_op_definition`), so importing a dialect parses every op's format, printed or not. A compile never
prints (`.asm` texts are printed on first access), yet the dialects it imports (xDSL's `arith`, `math`, `scf`,
`cf`, our `tt` and `mtia`) spent about half of their import parsing formats: 45 ms of the 90 ms the frontend's
imports cost in a cold first compile (benchmarks/compile_time.py --cold, with bytecode present), and the
lit suite starts a process per test.

`install()` makes xDSL's `FormatProgram.from_str` return a `LazyFormatProgram` for ops of `LAZY_DIALECTS`: the
same program, parsed on the first `parse` or `print` of one of the op's class. Ops of other dialects (a
caller's own) are parsed at definition as before, so a mistake in their format is still reported there; a
format of `LAZY_DIALECTS` that does not parse raises the same PyRDLOpDefinitionError, at its first use.
Installed when `mtia_xdsl.dialects` or `mtia_xdsl.frontend` is imported (before the xDSL dialects those
import); tests/frontend/test_lazy_formats.py checks that each lazily parsed program prints and parses as the
eager one.
"""

from __future__ import annotations

import threading
from typing import Any

LAZY_DIALECTS = frozenset({"arith", "builtin", "cf", "func", "llvm", "math", "mtia", "scf", "tt", "ttg", "ub"})
"""Dialects (the op-name prefix) whose formats are parsed on first use: xDSL's dialects the compiler imports
(tested by xDSL) and ours (tests/filecheck prints and parses every op)."""

_LOCK = threading.Lock()
_EAGER: list[Any] = []
"""xDSL's own `FormatProgram.from_str`, once `install` replaced it."""


class LazyFormatProgram:
    """An op's `FormatProgram`, parsed from `text` on the first `parse` or `print` (then kept)."""

    __slots__ = ("_op_def", "_program", "_text")

    def __init__(self, text: str, op_def: Any) -> None:
        self._text = text
        self._op_def = op_def
        self._program: Any = None

    def program(self) -> Any:
        """Return the parsed FormatProgram.

        Raises: PyRDLOpDefinitionError for a format that does not parse (the error xDSL raises at definition).
        """
        program = self._program
        if program is None:
            from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

            try:
                program = self._program = _EAGER[0](self._text, self._op_def)
            except ParseError as e:
                raise PyRDLOpDefinitionError("Error during the parsing of the assembly format: ", e.args) from e
        return program

    def parse(self, parser: Any, op_type: Any) -> Any:
        """`FormatProgram.parse`: parse an op of class `op_type` in this format."""
        return self.program().parse(parser, op_type)

    def print(self, printer: Any, op: Any) -> None:
        """`FormatProgram.print`: print `op` in this format."""
        return self.program().print(printer, op)

    def __getattr__(self, name: str) -> Any:  # `stmts` and anything else a FormatProgram has
        return getattr(self.program(), name)


def _from_str(text: str, op_def: Any) -> Any:
    if op_def.name.split(".", 1)[0] in LAZY_DIALECTS:
        return LazyFormatProgram(text, op_def)
    return _EAGER[0](text, op_def)


def install() -> None:
    """Parse the formats of ops of `LAZY_DIALECTS` defined from now on at their first use (process-wide, once)."""
    if _EAGER:
        return
    from xdsl.irdl.declarative_assembly_format import FormatProgram

    with _LOCK:
        if not _EAGER:
            _EAGER.append(FormatProgram.from_str)
            FormatProgram.from_str = staticmethod(_from_str)  # type: ignore[method-assign]


__all__ = ["LAZY_DIALECTS", "LazyFormatProgram", "install"]
